// A ledger written by an earlier version (the schema of commit 2d6026a: one event per row, stored
// verbatim as jsonb) keeps working with row bodies (one row per append, compressed): its rows read
// back, locateEffect finds its effects, and new events append after them in the same streams (both
// shapes in one table).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { workflowStream } from '../../src/core/streams.js';
import { effectIdKey } from '../../src/ledger/postgres-body.js';
import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import { declared, finished, started } from '../support/events.js';
import { testPostgresUrl } from '../support/services.js';

const schema = `upgrade_${process.pid}_${Date.now().toString(36)}`;
const table = `${schema}.events`;
let probe: pg.Client;
let ledger: PostgresLedger | undefined;
// The previous version's append statement, verbatim (git show 2d6026a:src/ledger/postgres-ledger.ts).
const OLD_APPEND = `INSERT INTO ${table} (stream, revision, type, data)
      SELECT b.s, b.r, b.t, b.d - 'type'
      FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (s text, r int, e int, t text, d jsonb)) WITH ORDINALITY AS b(s, r, e, t, d, n)
      WHERE b.e = -1 OR (SELECT 1 FROM ${table} x WHERE x.stream = b.s AND x.revision = b.e) = 1
      ORDER BY b.n
      RETURNING stream, revision, position`;

const oldStream = workflowStream('t1', 'wf-1');
const effectId = 'eff_1622bfa41f72d3c164b8cb0028be3867dbe59e7b';
const oldEvents = [declared(effectId, 1_000), started(effectId, 1, 1_100, { providerKey: 'efd-mnV5CB0pB_Vb4gj14c6KSIF9Wy9s4bINYzBQtfrrYLc' })];

beforeAll(async () => {
  probe = new pg.Client({ connectionString: testPostgresUrl() });
  await probe.connect();
  // The previous version's DDL and append statement, verbatim (git show 2d6026a:src/ledger/postgres-ledger.ts).
  await probe.query(`CREATE SCHEMA ${schema}`);
  await probe.query(`
      CREATE TABLE IF NOT EXISTS ${table} (
        position    BIGSERIAL PRIMARY KEY,
        stream      TEXT        NOT NULL,
        revision    INTEGER     NOT NULL,
        type        TEXT        NOT NULL,
        data        JSONB       NOT NULL,
        tx_id       XID8        NOT NULL DEFAULT pg_current_xact_id(),
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        UNIQUE (stream, revision)
      )`);
  await probe.query(`CREATE INDEX IF NOT EXISTS events_effect_declared ON ${table} ((data->>'effectId')) WHERE type = 'EffectDeclared'`);
  const rows = [
    ...oldEvents.map((d, i) => ({ s: oldStream, r: i, e: -1, t: d.type, d })),
    { s: 'other-stream', r: 0, e: -1, t: 'EffectDeclared', d: declared('e-old-2') },
  ];
  await probe.query(OLD_APPEND, [JSON.stringify(rows)]);
});

afterAll(async () => {
  await probe?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await ledger?.close();
  await probe?.end();
});

describe('PostgreSQL ledger written by the previous version', () => {
  it('reads the old rows, finds their effects, appends after them in row bodies and reads both shapes back in stream and global order; an old writer still running is refused', async () => {
    ledger = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema });
    expect((await ledger.readStream(oldStream)).map((e) => e.event)).toEqual(oldEvents);
    expect(await ledger.locateEffect(effectId)).toBe(oldStream);
    expect(await ledger.locateEffect('e-old-2')).toBe('other-stream');

    const more = finished(effectId, 1, 1_200, 'committed', 'ch_1');
    expect((await ledger.append(oldStream, [more], 1)).revision).toBe(2);
    const newId = 'eff_00000000000000000000000000000000000000ff';
    const fresh = [declared(newId, 2_000), started(newId, 1, 2_100)];
    const freshStream = workflowStream('t1', 'wf-1');
    await expect(ledger.append(freshStream, fresh, 1)).rejects.toThrow(); // same stream, stale revision
    await ledger.append(freshStream, fresh, 2);

    const all = [...oldEvents, more, ...fresh];
    expect((await ledger.readStream(oldStream)).map((e) => e.event)).toEqual(all);
    expect((await ledger.readStream(oldStream, 1)).map((e) => e.event)).toEqual(all.slice(2));
    expect((await ledger.readStreams([{ stream: oldStream }, { stream: 'other-stream' }])).map((r) => r.map((e) => e.event))).toEqual([all, [declared('e-old-2')]]);
    expect((await ledger.readAll(0, 100)).map((e) => e.event)).toEqual([...oldEvents, declared('e-old-2'), more, ...fresh]);
    expect(await ledger.locateEffect(newId)).toBe(oldStream);

    // The old rows are untouched; the new ones hold one append each, in a body: rows 2 (AttemptFinished) and 3 (EffectDeclared + AttemptStarted).
    const { rows } = await probe.query<{ revision: number; last_revision: number | null; data: Record<string, unknown> | null; body: Buffer | null; effect_id: Buffer | null }>(
      `SELECT revision, last_revision, data, body, effect_id FROM ${table} WHERE stream = $1 ORDER BY revision`, [oldStream]);
    expect(rows.map((r) => [r.revision, r.last_revision, r.data !== null && 'v' in r.data, r.body !== null])).toEqual([[0, null, true, false], [1, null, true, false], [2, 2, false, true], [3, 4, false, true]]);
    expect(rows[3]!.effect_id).toEqual(effectIdKey(newId));

    // A writer of the previous version still running (a rolling upgrade) can no longer write: the
    // table refuses its rows, loudly, even where its guard would let one in (revision 3 starts a
    // row, so it would put revision 4 beside the row's own) — not a stream with two revisions 4.
    const oldAppend = (rev: number, expected: number) => probe.query(OLD_APPEND, [JSON.stringify([{ s: oldStream, r: rev, e: expected, t: 'AttemptFinished', d: finished(newId, 1, 2_200, 'committed', 'ch_2') }])]);
    await expect(oldAppend(4, 3)).rejects.toMatchObject({ code: '23514', constraint: 'events_row_shape' });
    expect((await oldAppend(5, 4)).rowCount).toBe(0); // its guard finds no row starting at 4: nothing written
    expect((await ledger.readStream(oldStream)).map((e) => e.revision)).toEqual([0, 1, 2, 3, 4]);
  });
});
