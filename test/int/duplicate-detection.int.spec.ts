import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRIC } from '../../src/metrics/metric-names.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

interface Oracle { charges: { id: string; metadata: Record<string, string> }[]; refunds: { id: string; charge: string }[] }
const oracle = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body as Oracle;

/**
 * A provider that forgets keys sooner than its contract says (contract 24 h, provider 300 ms): a
 * same-key resend creates a second charge. effectd cannot prevent a provider lying about retention,
 * but it notices: the audit after a settle through a resend finds both objects by their stamped
 * reference, records DuplicateDetected with every receipt, alerts, and offers the undo.
 */
describe('a duplicate caused by a provider with a shorter key retention than declared', () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;

  beforeAll(async () => {
    payments = await startSimulator('payments', { options: { retentionMs: 300, searchLagMs: 2_500 } });
    const dir = tempDir('effectd-dup-');
    const configFile = writeToolsConfig(dir, { payments: payments.url }, { 'payments.charge': { settleWindowMs: 3_000 }, 'payments.refund': { settleWindowMs: 3_000 } });
    effectd = await startEffectd({ dataDir: dir, configFile });
  });
  afterAll(async () => {
    await effectd?.close();
    await payments?.close();
  });

  it('is detected, recorded with every receipt, queued for an operator, counted, and its extra charge undone once', async () => {
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const command = { workflowId: `wf-dup-${Date.now()}`, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-DUP-1', amount: 4900 } };
    const first = await postJson(`${effectd.url}/v1/effects`, command, { ...effectd.agent, prefer: 'wait=0' }); // the reconciler's path: no inline settle
    expect(first.body.status).toBe('unknown');
    await new Promise((r) => setTimeout(r, 400)); // the provider forgets the key; its search still lags
    const again = await postJson(`${effectd.url}/v1/effects`, command, effectd.agent);
    expect(again.body.status).toBe('done');
    expect((await oracle(payments)).charges).toHaveLength(2); // the provider acted twice: not preventable

    const effectId = first.body.effectId as string;
    const detected = await waitFor('the duplicate audit', async () => {
      const effect = (await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.operator)).body;
      return effect.duplicates ? effect : undefined;
    }, 15_000);
    const charges = (await oracle(payments)).charges.map((c) => c.id);
    expect(new Set(detected.duplicates.receipts)).toEqual(new Set(charges));
    expect(detected.duplicates.receipts[0]).toBe(detected.receipt);
    const extra = charges.find((id) => id !== detected.receipt)!;
    expect(detected.duplicates).toMatchObject({ own: detected.receipt, unhandled: [extra], undoTool: 'payments.refund' });
    expect(detected.evidence.map((e: { type: string }) => e.type)).toContain('DuplicateDetected');
    expect(detected.status).toBe('done'); // the agent's answer stays the truth about its effect

    const queue = (await getJson(`${effectd.url}/v1/effects?state=attention`, effectd.operator)).body.effects as { effectId: string }[];
    expect(queue.map((e) => e.effectId)).toContain(effectId);
    const metrics = await (await fetch(`${effectd.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`${METRIC.duplicatesDetected}\\{tool="payments.charge"\\} 1`));

    // An agent may not deal with it; an operator undoes the extra charge, once.
    expect((await postJson(`${effectd.url}/v1/effects/${effectId}/duplicates/${extra}`, { action: 'compensate', reason: 'two charges' }, effectd.agent)).status).toBe(403);
    const handled = await postJson(`${effectd.url}/v1/effects/${effectId}/duplicates/${extra}`, { action: 'compensate', reason: 'the provider charged twice; refunding the extra one' }, effectd.operator);
    expect(handled.status).toBe(200);
    expect(handled.body.duplicates.unhandled).toEqual([]);
    expect(handled.body.duplicates.handled[extra]).toMatchObject({ action: 'compensated', by: 'default-operator' });
    expect((await oracle(payments)).refunds.map((r) => r.charge)).toEqual([extra]);
    const twice = await postJson(`${effectd.url}/v1/effects/${effectId}/duplicates/${extra}`, { action: 'compensate', reason: 'again' }, effectd.operator);
    expect(twice.status).toBe(409);
    expect((await oracle(payments)).refunds).toHaveLength(1);
    const after = (await getJson(`${effectd.url}/v1/effects?state=attention`, effectd.operator)).body.effects as { effectId: string }[];
    expect(after.map((e) => e.effectId)).not.toContain(effectId);
  });

  it('a resend that finds one object is audited as single and leaves the queue alone', async () => {
    await postJson(`${payments.url}/_admin/reset`, {});
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const command = { workflowId: `wf-single-${Date.now()}`, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-DUP-2', amount: 4900 } };
    const first = await postJson(`${effectd.url}/v1/effects`, command, { ...effectd.agent, prefer: 'wait=0' }); // the reconciler's path: no inline settle
    const again = await postJson(`${effectd.url}/v1/effects`, command, effectd.agent); // inside the provider's 300 ms: replayed
    expect(again.body).toMatchObject({ status: 'done' });
    expect((await oracle(payments)).charges).toHaveLength(1);
    const audited = await waitFor('the audit', async () => {
      const effect = (await getJson(`${effectd.url}/v1/effects/${first.body.effectId}`, effectd.operator)).body;
      return effect.evidence.some((e: { type: string }) => e.type === 'ResendAudited') ? effect : undefined;
    }, 15_000);
    expect(audited.duplicates).toBeUndefined();
    expect(audited.evidence.at(-1).summary).toMatch(/one object at the provider/);
  });
});
