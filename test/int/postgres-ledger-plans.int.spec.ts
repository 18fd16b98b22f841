// The PostgreSQL ledger's batch statements stay index probes on a big ledger: the planner, which
// cannot see how many rows a batch parameter holds, must never get the chance to hash the whole
// events table (one sequential scan per append or read, growing with the ledger).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import { declared, finished, started } from '../support/events.js';
import { testPostgresUrl } from '../support/services.js';

const schema = `plans_${process.pid}_${Date.now().toString(36)}`;
const STREAMS = 3_000;
let ledger: PostgresLedger;
let probe: pg.Client;
const stream = (i: number) => `workflow-plans-${i}`;

/** Scans of the ledger's table so far, once the ledger's backends have flushed their statistics (an idle backend does within about a second). */
async function scans(): Promise<{ seq: number; idx: number }> {
  await new Promise((r) => setTimeout(r, 2_500));
  const { rows } = await probe.query<{ seq_scan: string; idx_scan: string }>('SELECT seq_scan, idx_scan FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2', [schema, 'events']);
  return { seq: Number(rows[0]!.seq_scan), idx: Number(rows[0]!.idx_scan ?? 0) };
}

beforeAll(async () => {
  probe = new pg.Client({ connectionString: testPostgresUrl() });
  await probe.connect();
  // A ledger of 3,000 streams × 2 events: big enough that hashing the table looks cheap to the planner next to 300 probes.
  // Loaded through a ledger of its own, closed before the measured one opens: a backend that ends
  // flushes its statistics, so the plans chosen while the table was still small (a scan of a tiny
  // table is fine) cannot arrive late, in the measured window.
  const loader = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema });
  for (let from = 0; from < STREAMS; from += 500) {
    await loader.appendMany(Array.from({ length: 500 }, (_, k) => ({ stream: stream(from + k), events: [declared(`e-${from + k}`), started(`e-${from + k}`, 1, 2_000)], expectedRevision: -1 })));
  }
  await loader.close();
  ledger = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema });
}, 60_000);

afterAll(async () => {
  await ledger?.dropSchema();
  await ledger?.close();
  await probe?.end();
});

describe('PostgreSQL ledger statements on a big ledger', () => {
  it('group-commits 300 appends at expected revisions and reads 300 streams in one query, round after round (past the switch to generic plans), without one sequential scan', async () => {
    const round = async (n: number) => {
      const picked = Array.from({ length: 300 }, (_, k) => n * 300 + k);
      const results = await ledger.appendMany(picked.map((i) => ({ stream: stream(i), events: [finished(`e-${i}`, 1, 3_000, 'committed', `ch_${i}`)], expectedRevision: 1 })));
      expect(results.every((r) => !(r instanceof Error) && r.revision === 2)).toBe(true);
      const reads = await ledger.readStreams(picked.map((i) => ({ stream: stream(i), afterRevision: 0 })));
      expect(reads.map((events) => events.map((e) => e.revision))).toEqual(picked.map(() => [1, 2]));
      // A stale expectation is still refused by the same statement.
      const stale = await ledger.appendMany([{ stream: stream(picked[0]!), events: [finished(`e-${picked[0]}`, 1, 3_000, 'committed')], expectedRevision: 1 }]);
      expect(stale[0]).toBeInstanceOf(Error);
    };
    for (let n = 0; n < 6; n++) await round(n);
    const before = await scans();
    for (let n = 6; n < 10; n++) await round(n);
    const after = await scans();
    // The statistics did arrive (each round probes the index for its 300 appends and 300 reads)…
    expect(after.idx - before.idx).toBeGreaterThanOrEqual(4 * 600);
    // …and none of it scanned the table.
    expect(after.seq - before.seq).toBe(0);
  }, 60_000);
});
