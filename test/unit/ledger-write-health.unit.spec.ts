import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { WriteWatchedLedger } from '../../src/ledger/write-health.js';
import { NO_STREAM, type Ledger } from '../../src/ledger/ledger.port.js';

const event = (n: number): LedgerEvent => ({ type: 'DecisionRecorded', v: 1, at: n, step: String(n), tool: 't', args: {}, recordedBy: 'test' } as unknown as LedgerEvent);

describe('write health: whether the ledger accepts writes (issue 27, rule 4)', () => {
  it('SQLite: a file made read-only or removed under the running process is noticed by the probe, and appends are refused with why', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'effectd-wh-')), 'ledger.db');
    const ledger = new SqliteLedger(file);
    await ledger.probeWrite();
    await ledger.append('wf-1', [event(1)], NO_STREAM);
    chmodSync(file, 0o400);
    await expect(ledger.probeWrite()).rejects.toThrow(/made read-only \(mode 400\)/);
    await expect(ledger.append('wf-1', [event(2)], 0)).rejects.toThrow(/read-only/);
    chmodSync(file, 0o600);
    await ledger.probeWrite();
    await ledger.append('wf-1', [event(2)], 0);
    rmSync(file);
    await expect(ledger.probeWrite()).rejects.toThrow(/was removed while effectd ran/);
    await expect(ledger.append('wf-1', [event(3)], 1)).rejects.toThrow(/removed/);
    await ledger.close();
  });

  it('the last append\'s outcome counts (a conflict is no failure), the probe too, and each change is told once', async () => {
    let failing = false;
    const inner = new SqliteLedger(':memory:');
    const flaky: Ledger = {
      kind: 'flaky',
      append: (stream, events, expected) => (failing ? Promise.reject(new Error('database or disk is full')) : inner.append(stream, events, expected)),
      readStream: (stream, after) => inner.readStream(stream, after),
      readAll: (from, limit) => inner.readAll(from, limit),
      probeWrite: () => (failing ? Promise.reject(new Error('disk full (probe)')) : inner.probeWrite()),
      close: () => inner.close(),
    };
    const changes: boolean[] = [];
    let clock = 0;
    const watched = new WriteWatchedLedger(flaky, { now: () => clock, onChange: (r) => changes.push(r.writable), minProbeGapMs: 1_000 });
    expect(watched.report()).toMatchObject({ writable: true, by: 'none' });
    await watched.append('s', [event(1)], NO_STREAM);
    await expect(watched.append('s', [event(2)], NO_STREAM)).rejects.toThrow(/not at revision/);
    expect(watched.report()).toMatchObject({ writable: true, by: 'append' });
    failing = true;
    await expect(watched.append('s', [event(2)], 0)).rejects.toThrow(/full/);
    expect(watched.report()).toMatchObject({ writable: false, by: 'append', error: 'database or disk is full' });
    // Within the gap the last outcome stands; after it, the probe asks.
    expect(await watched.check()).toMatchObject({ writable: false, by: 'append' });
    clock += 1_000;
    expect(await watched.check()).toMatchObject({ writable: false, by: 'probe', error: 'disk full (probe)' });
    failing = false;
    clock += 1_000;
    expect(await watched.check()).toMatchObject({ writable: true, by: 'probe' });
    expect(changes).toEqual([false, true]);
    await watched.close();
  });
});
