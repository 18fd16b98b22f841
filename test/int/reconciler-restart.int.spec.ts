import { workflowStream } from '../../src/core/streams.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
import { NO_STREAM } from '../../src/ledger/ledger.port.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { createRuntime } from '../../src/runtime/effectd-runtime.js';
import { tempDir, waitFor, writeToolsConfig } from '../support/effectd-harness.js';
import { loadSettings } from '../../src/config/settings-loader.js';

const SETTLED = 100_000;
const OPEN = 100;

function effectEvents(i: number, open: boolean): LedgerEvent[] {
  const effectId = `eff_bulk_${open ? 'open' : 'done'}_${i}`;
  const at = 1_700_000_000_000 + i;
  return [
    { type: 'EffectDeclared', v: 1, at, effectId, tenant: 'default', workflowId: `bulk-${i}`, step: '1', slot: '0', tool: 'weak.notify', contractVersion: 1, intentDigest: `d${i}`, args: { channel: 'ops', text: `n${i}` }, target: 'channel ops', principal: 'seed' },
    { type: 'AttemptStarted', v: 1, at, effectId, attempt: 1, instanceId: 'seed', providerKey: null, leaseUntil: at + 1_000, keyExpiresAt: null },
    { type: 'AttemptFinished', v: 1, at: at + 5, effectId, attempt: 1, outcome: open ? 'unknown' : 'committed', replayed: false, reason: 'seeded', latencyMs: 5, ...(open ? {} : { receipt: `r${i}` }) },
  ];
}

describe('a restart with 100,000 settled effects and 100 open ones', () => {
  it('picks up the 100 open effects within a second, without scanning history', async () => {
    const dataDir = tempDir();
    const seed = new SqliteLedger(join(dataDir, 'ledger.db'), { synchronous: 'NORMAL' });
    for (let i = 0; i < SETTLED; i++) await seed.append(workflowStream("default", `bulk-${i}`), effectEvents(i, false), NO_STREAM);
    for (let i = 0; i < OPEN; i++) await seed.append(workflowStream("default", `open-${i}`), effectEvents(i, true), NO_STREAM);
    await seed.close();
    const configFile = writeToolsConfig(dataDir, { weak: 'http://127.0.0.1:9' });

    // The previous run: its projection caught up once and left its snapshot behind.
    const before = await createRuntime({ dataDir, configFile, settings: loadSettings({}) });
    const scanStarted = performance.now();
    const scanned = await before.openEffects.catchUp();
    const scanMs = performance.now() - scanStarted;
    before.openEffects.save();
    expect(before.openEffects.list()).toHaveLength(OPEN);
    await before.close();

    const after = await createRuntime({ dataDir, configFile, reconcileTickMs: 20, settings: loadSettings({}) });
    let readAfterRestart = 0;
    const readAll = after.ledger.readAll.bind(after.ledger);
    after.ledger.readAll = async (from, limit) => {
      const page = await readAll(from, limit);
      readAfterRestart += page.length;
      return page;
    };
    const started = performance.now();
    const loaded = after.startReconciler();
    await waitFor('all 100 open effects to be handled', async () => (after.openEffects.list().every((e) => e.state.recordedStatus === 'escalated') ? true : undefined), 10_000, 5);
    const pickupMs = performance.now() - started;
    await after.close();

    console.log(`[reconciler restart] history scan by the previous run: ${scanned} events in ${scanMs.toFixed(0)} ms; after restart: ${loaded} open effects from the snapshot, ${readAfterRestart} events read (the reconciler's own escalations), all ${OPEN} handled in ${pickupMs.toFixed(0)} ms`);
    expect(loaded).toBe(OPEN);
    expect(scanned).toBe((SETTLED + OPEN) * 3);
    // Only the 100 escalations the reconciler itself appended are read back: no history.
    expect(readAfterRestart).toBeLessThanOrEqual(OPEN);
    expect(pickupMs).toBeLessThan(1_000);
  }, 180_000);
});
