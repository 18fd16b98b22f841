import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

interface LoggedRequest { method: string; path: string; idempotencyKey: string | null; status: number | string; replayed: boolean }
const posts = async (sim: RunningSimulator) => ((await getJson(`${sim.url}/_admin/requests`)).body as { requests: LoggedRequest[] }).requests.filter((r) => r.method === 'POST');
const charges = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; idempotencyKey: string }[];
const storedFailure = (sim: RunningSimulator) => postJson(`${sim.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'status', status: 500, afterExecutionBegan: true } }] });

let n = 0;
const command = (tool: string) => ({ workflowId: `wf-v2-${process.pid}-${++n}`, step: 1, tool, args: { invoiceId: `INV-V${n}`, amount: 2500 } });

async function settled(effectd: InProcessEffectd, effectId: string, timeoutMs = 8_000) {
  return waitFor(`effect ${effectId} to settle`, async () => {
    const effect = (await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.agent)).body;
    return ['committed', 'failed_before_effect', 'terminal_failure', 'escalated'].includes(effect.state) ? effect : undefined;
  }, timeoutMs, 50);
}

/**
 * Stripe v1 and v2 on real local providers: the same first-hand 500, stored by the provider once
 * execution began. v1 replays it to effectd's same-key resend (a poisoned key: a human); v2
 * executes the charge again on that resend, and effectd settles it committed.
 */
describe('Stripe v1 and v2: a failure the provider stored under the key', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });

  async function setup(v2Simulator: 'v1' | 'v2' = 'v2') {
    const v1 = await startSimulator('payments', { options: { searchLagMs: 0 } });
    const v2 = await startSimulator('payments', { options: { apiVersion: v2Simulator, searchLagMs: 0 } });
    const dataDir = tempDir();
    const settle = { settleWindowMs: 300 };
    const effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: v1.url, 'payments-v2': v2.url }, { 'payments.charge': settle, 'payments.charge-v2': settle }) });
    open.push(v1, v2, effectd);
    return { v1, v2, effectd };
  }

  it('v1 (payments.charge): the resend meets the replayed 500 and the effect stops at terminal_failure, nothing charged', async () => {
    const { v1, effectd } = await setup();
    await storedFailure(v1);
    const answer = await postJson(`${effectd.url}/v1/effects`, command('payments.charge'), { ...effectd.agent, prefer: 'wait=0' }); // the reconciler's path: no inline settle
    expect(answer.body).toMatchObject({ state: 'unknown', status: 'unknown' });
    expect((await settled(effectd, answer.body.effectId)).state).toBe('terminal_failure');
    const sent = await posts(v1);
    expect(sent.map((r) => [r.status, r.replayed])).toEqual([[500, false], [500, true]]);
    expect(await charges(v1)).toHaveLength(0);
  });

  it('v2 (payments.charge-v2): the same-key resend executes the charge, and effectd settles it committed with that receipt', async () => {
    const { v2, effectd } = await setup();
    await storedFailure(v2);
    const cmd = command('payments.charge-v2');
    const answer = await postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, prefer: 'wait=0' });
    expect(answer.body).toMatchObject({ state: 'unknown', status: 'unknown' });
    const done = await settled(effectd, answer.body.effectId);
    expect(done.state).toBe('committed');
    const sent = await posts(v2);
    expect(sent.map((r) => [r.status, r.replayed])).toEqual([[500, false], [200, false]]);
    expect(sent[1]!.idempotencyKey).toBe(sent[0]!.idempotencyKey);
    const truth = await charges(v2);
    expect(truth).toHaveLength(1);
    expect(done.receipt).toBe(truth[0]!.id);
    expect(truth[0]!.idempotencyKey).toBe(sent[0]!.idempotencyKey);
    // The agent's resubmission is answered from the ledger: done, the same charge.
    const again = await postJson(`${effectd.url}/v1/effects`, cmd, effectd.agent);
    expect(again.body).toMatchObject({ effectId: answer.body.effectId, state: 'committed', status: 'done', receipt: truth[0]!.id });
    expect(await posts(v2)).toHaveLength(2);
    expect(await charges(v2)).toHaveLength(1);
  });

  it('a v2 contract against a provider that does replay its stored 500 (v1): the replayed 500 is never taken as poison, every resend carries the one key, nothing is charged', async () => {
    const { v2, effectd } = await setup('v1');
    await storedFailure(v2);
    const answer = await postJson(`${effectd.url}/v1/effects`, command('payments.charge-v2'), { ...effectd.agent, prefer: 'wait=0' });
    // Two same-key resends met the replay (the contract's resend bounds then hand it to a human).
    const sent = await waitFor('two resends', async () => {
      const requests = await posts(v2);
      return requests.length >= 3 ? requests : undefined;
    }, 10_000);
    expect(sent.slice(1).every((r) => r.status === 500 && r.replayed)).toBe(true);
    expect(new Set(sent.map((r) => r.idempotencyKey)).size).toBe(1);
    const effect = (await getJson(`${effectd.url}/v1/effects/${answer.body.effectId}`, effectd.agent)).body;
    expect(['unknown', 'escalated']).toContain(effect.state);
    expect(await charges(v2)).toHaveLength(0);
  });
});
