import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, ensureBuilt, getJson, postJson, spawnEffectd, startEffectd, startPayments, tempDir, waitFor, writeFastPaymentsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

interface Oracle { charges: { id: string; amount: number; metadata: Record<string, string> }[] }
interface LoggedRequest { method: string; path: string; idempotencyKey: string | null; status: number | string; replayed: boolean }

const charges = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body as Oracle;
const requests = async (sim: RunningSimulator) => ((await getJson(`${sim.url}/_admin/requests`)).body as { requests: LoggedRequest[] }).requests.filter((r) => r.method === 'POST');
const arm = (sim: RunningSimulator, rules: unknown[]) => postJson(`${sim.url}/_admin/faults`, { rules });

describe('the deterministic shell against a real HTTP provider', () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;
  let n = 0;
  const command = (overrides: Record<string, unknown> = {}) => ({ workflowId: `wf-shell-${++n}`, step: 1, tool: 'payments.charge', principal: 'test-agent', args: { invoiceId: `INV-${n}`, amount: 4900 }, ...overrides });

  beforeAll(async () => {
    payments = await startPayments();
    effectd = await startEffectd({ providerUrls: { payments: payments.url } });
  });
  afterAll(async () => {
    await effectd.close();
    await payments.close();
  });

  it('a reply lost after the provider committed is unknown, and resubmitting the step adds zero provider-side charges', async () => {
    await postJson(`${payments.url}/_admin/reset`, {});
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
    const cmd = command();
    const first = await postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, prefer: 'wait=0' }); // no inline settle: the resubmission's reconcile-first is the point
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('unknown');
    expect(first.body.message).toMatch(/Do not start another payments.charge/);
    expect((await charges(payments)).charges).toHaveLength(1);

    const again = await postJson(`${effectd.url}/v1/effects`, { ...cmd, args: { ...cmd.args, amount: '49.00 USD' } }, effectd.agent);
    expect(again.body.status).toBe('done');
    const third = await postJson(`${effectd.url}/v1/effects`, cmd, effectd.agent);
    expect(third.body).toMatchObject({ status: 'done', replayed: true, receipt: again.body.receipt });

    const truth = await charges(payments);
    expect(truth.charges).toHaveLength(1);
    expect(truth.charges[0]!.id).toBe(again.body.receipt);
    const sent = await requests(payments);
    expect(sent).toHaveLength(2);
    expect(new Set(sent.map((r) => r.idempotencyKey)).size).toBe(1);
    expect(sent[1]!.replayed).toBe(true);
  });

  it('the same step with a changed amount is a conflict (422) and the provider is not called', async () => {
    await postJson(`${payments.url}/_admin/reset`, {});
    const cmd = command();
    expect((await postJson(`${effectd.url}/v1/effects`, cmd, effectd.agent)).body.status).toBe('done');
    const before = (await requests(payments)).length;
    const changed = await postJson(`${effectd.url}/v1/effects`, { ...cmd, args: { ...cmd.args, amount: 5000 } }, effectd.agent);
    expect(changed.status).toBe(422);
    expect(changed.body.error).toBe('intent_conflict');
    // Refused, never not_done, and with step 1 done it does not invite a new step (issue 25): it says what was recorded.
    expect(changed.body.message).not.toMatch(/new step/);
    expect(changed.body.message).toMatch(/nothing was sent for this command\. What step \S+ recorded: done: .* It is done: do not do it again under another step\.$/);
    expect((await requests(payments)).length).toBe(before);
    expect((await charges(payments)).charges).toHaveLength(1);
  });

  it('a provider refusal (4xx) is not_done, proven; a 5xx leaves the outcome unknown', async () => {
    await postJson(`${payments.url}/_admin/reset`, {});
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined' } } } }]);
    const declined = await postJson(`${effectd.url}/v1/effects`, command(), effectd.agent);
    expect(declined.body).toMatchObject({ status: 'not_done', state: 'failed_before_effect' });
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'status', status: 503 } }]);
    const unavailable = await postJson(`${effectd.url}/v1/effects`, command(), { ...effectd.agent, prefer: 'wait=0' }); // the classification, before any inline settle
    expect(unavailable.body.status).toBe('unknown');
  });

  it('a provider that is down (connection refused) is not_done: the request provably never left', async () => {
    const down = await startEffectd({ providerUrls: { payments: 'http://127.0.0.1:1' } });
    try {
      const answer = await postJson(`${down.url}/v1/effects`, command(), down.agent);
      expect(answer.body).toMatchObject({ status: 'not_done', state: 'failed_before_effect' });
      expect(answer.body.reason).toMatch(/never sent/);
    } finally {
      await down.close();
    }
  });

  it('shows the workflow timeline and the effect, and counts attempts in /metrics', async () => {
    const cmd = command();
    const done = await postJson(`${effectd.url}/v1/effects`, cmd, effectd.agent);
    const wf = await getJson(`${effectd.url}/v1/workflows/${cmd.workflowId}`, effectd.agent);
    expect(wf.status).toBe(200);
    expect(wf.body.timeline.map((e: { type: string }) => e.type)).toEqual(['EffectDeclared', 'AttemptStarted', 'AttemptFinished']);
    expect(wf.body.effects[0]).toMatchObject({ effectId: done.body.effectId, status: 'done' });
    const effect = await getJson(`${effectd.url}/v1/effects/${done.body.effectId}`, effectd.agent);
    expect(effect.body).toMatchObject({ status: 'done', workflowId: cmd.workflowId, attempts: 1 });
    expect((await getJson(`${effectd.url}/v1/effects/eff_nope`, effectd.agent)).status).toBe(404);
    const metrics = await getJson(`${effectd.url}/metrics`);
    expect(metrics.body).toMatch(/effectd_attempts_total\{tool="payments.charge",outcome="committed"\} [1-9]/);
    expect(metrics.body).toMatch(/effectd_effects\{[^}]*state="committed"[^}]*\} [1-9]/);
    expect(metrics.body).toMatch(/effectd_ledger_append_duration_seconds_bucket/);
    expect((await getJson(`${effectd.url}/healthz`)).body).toMatchObject({ status: 'ok', ledger: 'sqlite' });
  });
});

describe('a crash between claim and outcome (SIGKILL of a separate effectd process)', () => {
  let payments: RunningSimulator;
  beforeAll(async () => {
    await ensureBuilt();
    payments = await startPayments();
  });
  afterAll(async () => payments.close());

  it('after restart the effect is unknown, and is re-sent only with the same key to a provider that deduplicates', async () => {
    const dir = tempDir();
    const config = writeFastPaymentsConfig(dir, payments.url, 1_000);
    // The provider holds the first charge for 1.5 s, then commits it even though the caller is gone.
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'delay', ms: 1_500 } }]);
    const first = await spawnEffectd(['--data-dir', dir, '--config', config]);
    const cmd = { workflowId: 'wf-crash', step: 'charge', tool: 'payments.charge', args: { invoiceId: 'INV-crash', amount: 1200 } };
    const pending = postJson(`${first.url}/v1/effects`, cmd, authHeaders(dir, 'agent')).catch(() => 'connection lost');
    await waitFor('the provider to receive the charge', async () => ((await requests(payments)).length > 0 ? true : undefined));
    await first.kill('SIGKILL');
    expect(await pending).toBe('connection lost');
    await waitFor('the provider to commit the held charge', async () => ((await charges(payments)).charges.length === 1 ? true : undefined));

    // Without its reconciler the restarted instance shows the unknown and waits for the agent's resubmission.
    const second = await spawnEffectd(['--data-dir', dir, '--config', config, '--no-reconciler']);
    try {
      const wf = await getJson(`${second.url}/v1/workflows/wf-crash`, authHeaders(dir, 'agent'));
      const effectId = wf.body.effects[0].effectId as string;
      const state = await waitFor('the lease to run out', async () => {
        const e = await getJson(`${second.url}/v1/effects/${effectId}`, authHeaders(dir, 'agent'));
        return e.body.state === 'unknown' ? e.body : undefined;
      }, 10_000, 100);
      expect(state.status).toBe('unknown');
      expect((await charges(payments)).charges).toHaveLength(1);

      const resumed = await postJson(`${second.url}/v1/effects`, cmd, authHeaders(dir, 'agent'));
      expect(resumed.body.status).toBe('done');
      const sent = await requests(payments);
      expect(sent).toHaveLength(2);
      expect(sent[0]!.idempotencyKey).toBeTruthy();
      expect(sent[1]!.idempotencyKey).toBe(sent[0]!.idempotencyKey);
      expect(sent[1]!.replayed).toBe(true);
      expect((await charges(payments)).charges).toHaveLength(1);
      expect(resumed.body.receipt).toBe((await charges(payments)).charges[0]!.id);
    } finally {
      await second.kill('SIGTERM');
    }
  });
});
