import { afterAll, describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
import { NO_STREAM } from '../../src/ledger/ledger.port.js';
import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import { WriteWatchedLedger } from '../../src/ledger/write-health.js';
import { testPostgresUrl } from '../support/services.js';

/**
 * Issue 27, rule 4: a PostgreSQL ledger that turns read-only (`default_transaction_read_only`, here
 * set for the connection as an operator would for the database or role) is noticed by the write
 * probe — without writing to any workflow stream — and by the appends' outcome.
 */
const event = (n: number): LedgerEvent => ({ type: 'DecisionRecorded', v: 1, at: n, step: String(n), tool: 't', args: {}, recordedBy: 'test' } as unknown as LedgerEvent);

describe('write health of a PostgreSQL ledger (npm run services:up)', () => {
  const schema = `read_only_${process.pid}`;
  const opened: PostgresLedger[] = [];
  afterAll(async () => {
    await opened[0]?.dropSchema?.().catch(() => undefined);
    for (const ledger of opened) await ledger.close().catch(() => undefined);
  });

  it('default_transaction_read_only=on: the probe says so, an append fails, and the watched ledger reports it', async () => {
    const writable = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema });
    opened.push(writable);
    await writable.probeWrite();
    await writable.append('wf-ro', [event(1)], NO_STREAM);

    // Opened while writable (one connection), then turned read-only under it, as `ALTER DATABASE … SET
    // default_transaction_read_only = on` does for the sessions that follow.
    const readOnly = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema, poolSize: 1 });
    opened.push(readOnly);
    await readOnly.probeWrite();
    await (readOnly as unknown as { pool: { query(sql: string): Promise<unknown> } }).pool.query('SET SESSION default_transaction_read_only = on');
    await expect(readOnly.probeWrite()).rejects.toThrow(/read-only \(default_transaction_read_only is on/);
    const watched = new WriteWatchedLedger(readOnly, { minProbeGapMs: 0 });
    expect(await watched.check()).toMatchObject({ writable: false, by: 'probe' });
    await expect(watched.append('wf-ro', [event(2)], 0)).rejects.toThrow(/read-only/);
    expect(watched.report()).toMatchObject({ writable: false, by: 'append' });
    // Reads still work: the ledger is degraded, not gone.
    expect(await readOnly.readStream('wf-ro')).toHaveLength(1);
  });
});
