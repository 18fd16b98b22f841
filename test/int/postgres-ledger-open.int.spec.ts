// Several processes opening one new schema at once (effectd start --workers N, a fleet starting):
// CREATE … IF NOT EXISTS is not safe under concurrency in PostgreSQL (two creators collide in the
// catalog's unique index: "duplicate key value violates unique constraint pg_type_typname_nsp_index"),
// so the ledger's DDL runs under an advisory lock. Eight pools open the same fresh schema at once.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import { declared } from '../support/events.js';
import { testPostgresUrl } from '../support/services.js';

const schema = `open_race_${process.pid}_${Date.now().toString(36)}`;
const opened: PostgresLedger[] = [];

afterAll(async () => {
  await opened[0]?.dropSchema();
  await Promise.all(opened.map((l) => l.close()));
});

describe('PostgresLedger.open on a new schema', () => {
  it('eight ledgers opening the same new schema at once all open, on one table', async () => {
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => PostgresLedger.open({ connectionString: testPostgresUrl(), schema, poolSize: 1 })));
    for (const r of results) if (r.status === 'fulfilled') opened.push(r.value);
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    await opened[0]!.append('s-1', [declared('eff-open-1')], -1);
    expect((await opened[7]!.readStream('s-1')).map((r) => r.event.type)).toEqual(['EffectDeclared']);
    const probe = new pg.Client({ connectionString: testPostgresUrl() });
    await probe.connect();
    try {
      const tables = await probe.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1`, [schema]);
      expect(tables.rows[0].n).toBe(1);
    } finally {
      await probe.end();
    }
  });
});
