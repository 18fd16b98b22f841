// Integration test against the PostgreSQL cluster prepared by `npm run services:up`.
import { describe, it, expect, afterAll } from 'vitest';
import pg from 'pg';

const url = process.env.EFFECTD_PG_URL ?? 'postgres://effectd:effectd@127.0.0.1:5432/effectd_test';
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
let connected: Promise<unknown> | undefined;
const db = async () => {
  connected ??= client.connect();
  await connected;
  return client;
};

afterAll(async () => {
  if (connected) await client.end().catch(() => {});
});

describe('postgres service (services:up)', () => {
  it('keeps synchronous_commit on (durable commits)', async () => {
    const c = await db();
    const { rows } = await c.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    expect(rows[0].synchronous_commit).toBe('on');
  });

  it('runs CREATE TEMP TABLE / INSERT / SELECT as the effectd role', async () => {
    const c = await db();
    const who = await c.query<{ user: string; db: string }>('SELECT current_user AS "user", current_database() AS db');
    expect(who.rows[0].user).toBe(new URL(url).username);
    await c.query('CREATE TEMP TABLE svc_check (id bigserial PRIMARY KEY, workflow_id text NOT NULL, n int NOT NULL)');
    const ins = await c.query<{ id: string }>(
      'INSERT INTO svc_check (workflow_id, n) VALUES ($1, $2), ($3, $4) RETURNING id',
      ['wf-a', 1, 'wf-b', 2],
    );
    expect(ins.rowCount).toBe(2);
    const { rows } = await c.query<{ workflow_id: string; n: number }>(
      'SELECT workflow_id, n FROM svc_check ORDER BY id',
    );
    expect(rows).toEqual([
      { workflow_id: 'wf-a', n: 1 },
      { workflow_id: 'wf-b', n: 2 },
    ]);
  });
});
