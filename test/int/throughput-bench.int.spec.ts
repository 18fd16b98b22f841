// The throughput bench itself (not a measurement): a tiny run of its real lanes — a direct POST,
// effectd over HTTP on PostgreSQL, and the same charge as a DBOS Transact workflow (the real SDK,
// its system database on the same server) — answers every effect, measures each lane, and leaves
// no schema or database of its run behind.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { benchDatabaseUrl } from '../../packages/bench/src/throughput/pg-counters.js';
import { ensureBuilt, tempDir } from '../support/effectd-harness.js';
import { testPostgresUrl } from '../support/services.js';

const run = promisify(execFile);

interface Summary { ingress: string; build: string; concurrency: number; perSecond: number; notDone: number; walBytesPerEffect: number; cpuMsPerEffect: Record<string, number> }

describe('npm run bench:throughput', () => {
  it('measures direct, effectd (HTTP) and DBOS lanes side by side, every effect answered, and cleans up after itself', async () => {
    await ensureBuilt();
    const out = join(tempDir(), 'throughput.json');
    const { stdout } = await run(process.execPath, ['packages/bench/dist/packages/bench/src/throughput-bench.js', '--ingress', 'http,dbos', '--concurrency', '4', '--effects', '40', '--warmup', '0', '--reps', '1', '--out', out], { timeout: 180_000, maxBuffer: 10_000_000 });
    expect(stdout).toMatch(/dbos \| dbos-5\.3\.0/);
    const result = JSON.parse(readFileSync(out, 'utf8')) as { run: string; summaries: Summary[] };
    const lane = (ingress: string) => result.summaries.find((s) => s.ingress === ingress)!;
    for (const ingress of ['direct', 'http', 'dbos']) {
      expect(lane(ingress), ingress).toBeDefined();
      expect(lane(ingress).notDone, ingress).toBe(0);
      expect(lane(ingress).perSecond, ingress).toBeGreaterThan(0);
    }
    // Both durable lanes write WAL and spend CPU in their own process; the direct lane writes none of its own.
    for (const ingress of ['http', 'dbos']) {
      expect(lane(ingress).walBytesPerEffect, ingress).toBeGreaterThan(100);
      expect(lane(ingress).cpuMsPerEffect.effectd, ingress).toBeGreaterThan(0);
    }
    // The bench's own database holds its ledger schemas; DBOS's system database of the run is another one.
    const probe = new pg.Client({ connectionString: (await benchDatabaseUrl(testPostgresUrl())).url });
    await probe.connect();
    try {
      const { rows } = await probe.query<{ name: string }>(`SELECT datname AS name FROM pg_database WHERE datname LIKE $1 UNION ALL SELECT nspname FROM pg_namespace WHERE nspname LIKE $2`, [`%_dbos_${result.run}`, `bench_tp_${result.run}_%`]);
      expect(rows).toEqual([]);
    } finally {
      await probe.end();
    }
  }, 200_000);

  it("counts the broker's requests per effect on a Kafka lane, from the broker's own metrics", async () => {
    await ensureBuilt();
    const out = join(tempDir(), 'throughput-kafka.json');
    const { stdout } = await run(process.execPath, ['packages/bench/dist/packages/bench/src/throughput-bench.js', '--ingress', 'kafka', '--concurrency', '4', '--effects', '40', '--warmup', '0', '--reps', '1', '--idle-seconds', '1', '--out', out], { timeout: 180_000, maxBuffer: 10_000_000 });
    expect(stdout).toMatch(/broker req\/eff/);
    const result = JSON.parse(readFileSync(out, 'utf8')) as { summaries: (Summary & { brokerRequestsPerEffect?: number; brokerRequestsByApi?: Record<string, number> })[] };
    const kafka = result.summaries.find((s) => s.ingress === 'kafka')!;
    expect(kafka.notDone).toBe(0);
    // Each command and each answer is in some produce request, and both sides fetch: never zero, never absurd at c=4.
    expect(kafka.brokerRequestsByApi?.Produce).toBeGreaterThan(0);
    expect(kafka.brokerRequestsByApi?.Fetch).toBeGreaterThan(0);
    expect(kafka.brokerRequestsPerEffect).toBeGreaterThan(0.1);
    expect(kafka.brokerRequestsPerEffect).toBeLessThan(20);
  }, 200_000);
});
