// Issue 13, items 1–4, on a real local provider (the payments simulator, Stripe v1 semantics) with
// effectd in-process: a resend sends the first attempt's request even after the contract changed;
// "do not start another X for Y" holds a repaired call on the same target; a poisoned key keeps
// looking up; and resends of a tool that cannot see a replay are capped, then escalated.
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, startPayments, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

interface LoggedRequest { method: string; path: string; idempotencyKey: string | null; bodyDigest: string | null; status: number | string; replayed: boolean }
interface Charge { id: string; amount: number; idempotencyKey: string | null; metadata: Record<string, string> }
interface TimelineEntry { type: string; event: Record<string, any> }

const posts = async (sim: RunningSimulator) => ((await getJson(`${sim.url}/_admin/requests`)).body as { requests: LoggedRequest[] }).requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/charges'));
const charges = async (sim: RunningSimulator, invoiceId?: string) => ((await getJson(`${sim.url}/_oracle/state`)).body.charges as Charge[]).filter((c) => invoiceId === undefined || c.metadata.invoice_id === invoiceId);
const arm = async (sim: RunningSimulator, rules: unknown[]) => expect((await postJson(`${sim.url}/_admin/faults`, { rules })).status).toBe(200);
const dropFirstCharge = (sim: RunningSimulator) => arm(sim, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let n = 0;
const uniq = () => `${process.pid}-${++n}`;
// About the reconciler's resends and the holds meanwhile: answers do not wait for an inline settle (docs/inline-settle.md).
const submit = (effectd: InProcessEffectd, body: Record<string, unknown>) => postJson(`${effectd.url}/v1/effects`, body, { ...effectd.agent, prefer: 'wait=0' });
const effectState = async (effectd: InProcessEffectd, effectId: string) => (await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.agent)).body;
const timeline = async (effectd: InProcessEffectd, workflowId: string) => (await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.agent)).body.timeline as TimelineEntry[];
const SETTLED = ['committed', 'failed_before_effect', 'terminal_failure', 'escalated'];
async function reaches(effectd: InProcessEffectd, effectId: string, states: string[], timeoutMs = 10_000) {
  return waitFor(`effect ${effectId} to reach ${states.join('|')}`, async () => {
    const effect = await effectState(effectd, effectId);
    return states.includes(effect.state) ? effect : undefined;
  }, timeoutMs, 50);
}

describe('resends, holds and poisoned keys on a real local provider (issue 13, items 1–4)', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  async function payments(options: Record<string, unknown>) {
    const sim = await startPayments(options);
    open.push(sim);
    return sim;
  }
  async function effectd(dataDir: string, config: string, instanceId?: string) {
    const started = await startEffectd({ dataDir, configFile: config, ...(instanceId ? { instanceId } : {}) });
    open.push(started);
    return started;
  }

  describe('1. a resend sends the first attempt\'s request, whatever the contract says now', () => {
    // Long enough that the scheduled reconciler only looks up (search lag 8 s) during the test:
    // the resend under test is the one the agent's resubmission triggers.
    const base = { settleWindowMs: 30_000 };
    const edited = { settleWindowMs: 30_000, request: { body: { metadata: { source: 'agent-v2' } } } };

    async function expectOneChargeFromTheFirstRequest(sim: RunningSimulator, invoiceId: string, receipt: string) {
      const truth = await charges(sim, invoiceId);
      expect(truth).toHaveLength(1);
      expect(truth[0]!.id).toBe(receipt);
      expect(truth[0]!.metadata.source).toBeUndefined(); // the first request's parameters
      const sent = await posts(sim);
      expect(sent).toHaveLength(2);
      // One key, one body: the resend was byte for byte the first request, and the provider replayed its stored answer.
      expect(new Set(sent.map((r) => r.idempotencyKey)).size).toBe(1);
      expect(sent[1]!.bodyDigest).toBe(sent[0]!.bodyDigest);
      expect(sent.map((r) => [r.status, r.replayed])).toEqual([['dropped', false], [200, true]]);
    }

    // Before: the resend was rebuilt from the contract loaded now, so it carried metadata.source,
    // the provider answered 400 idempotency_error, and effectd told the agent `not_done`.
    it('(a) a config edit and a restart while a charge is unknown: the resubmission settles it committed, one charge, never not_done', async () => {
      const sim = await payments({ searchLagMs: 8_000 });
      const dataDir = tempDir();
      const before = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': base }));
      await dropFirstCharge(sim);
      const id = uniq();
      const cmd = { workflowId: `wf-edit-${id}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-E${id}`, amount: 4900 } };
      const first = await submit(before, cmd);
      expect(first.body).toMatchObject({ status: 'unknown', state: 'unknown' });
      await before.close();
      open.splice(open.indexOf(before), 1);

      // The same data dir, one more field in request.body, version unchanged.
      const after = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': edited }));
      expect(after.runtime.tools.get('payments.charge')!.spec.version).toBe(1);
      expect((after.runtime.tools.get('payments.charge')!.spec.request!.body as { metadata: Record<string, string> }).metadata.source).toBe('agent-v2');
      const again = await submit(after, cmd);
      expect(again.status).toBe(200);
      expect(again.body.status).not.toBe('not_done');
      expect(again.body).toMatchObject({ status: 'done', state: 'committed', effectId: first.body.effectId });
      await expectOneChargeFromTheFirstRequest(sim, cmd.args.invoiceId, again.body.receipt);

      // What the ledger recorded: the request of attempt 1, and attempt 2 sent exactly it.
      const attempts = (await timeline(after, cmd.workflowId)).filter((e) => e.type === 'AttemptStarted').map((e) => e.event);
      expect(attempts).toHaveLength(2);
      expect(attempts[0]!.request).toMatchObject({ method: 'POST', path: '/v1/charges', encoding: 'json' });
      expect(attempts[0]!.request.body).not.toContain('agent-v2');
      expect(attempts[1]!.request).toEqual(attempts[0]!.request);
      // The agent reads it done, and a "repair" for the same invoice is not sent.
      const repair = await submit(after, { ...cmd, step: 2 });
      expect(repair.body).toMatchObject({ status: 'done', state: 'held', receipt: again.body.receipt });
      expect(await charges(sim, cmd.args.invoiceId)).toHaveLength(1);
    });

    it('(b) a rolling deploy: two instances on one ledger with different configs; the second gets the resubmission: one charge, never not_done', async () => {
      const sim = await payments({ searchLagMs: 8_000 });
      const dataDir = tempDir();
      const blue = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': base }), 'blue');
      const green = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': edited }), 'green');
      await dropFirstCharge(sim);
      const id = uniq();
      const cmd = { workflowId: `wf-deploy-${id}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-D${id}`, amount: 4900 } };
      const first = await submit(blue, cmd);
      expect(first.body).toMatchObject({ status: 'unknown', state: 'unknown' });

      const again = await submit(green, cmd);
      expect(again.body.status).not.toBe('not_done');
      expect(again.body).toMatchObject({ status: 'done', state: 'committed', effectId: first.body.effectId });
      await expectOneChargeFromTheFirstRequest(sim, cmd.args.invoiceId, again.body.receipt);
      const attempts = (await timeline(green, cmd.workflowId)).filter((e) => e.type === 'AttemptStarted').map((e) => e.event);
      expect(attempts.map((a) => a.instanceId)).toEqual(['blue', 'green']);
      // Both instances read the same settled effect.
      expect(await effectState(blue, first.body.effectId)).toMatchObject({ state: 'committed', receipt: again.body.receipt });
    });
  });

  describe('2. while an effect on a target is unconfirmed, a new effect on the same tool + target is held', () => {
    // Lookups find step 1 about 1.5 s after its commit; the settle window is wider, so no resend.
    const settle = { settleWindowMs: 10_000 };

    // Before: the content index held identical business content only; a repaired amount was charged at once.
    it('a repaired amount on the same invoice is held (one charge); after step 1 commits, step 2 is already done and never sent by a release; a declared repeat sends it (issue 32)', async () => {
      const sim = await payments({ searchLagMs: 1_500 });
      const dataDir = tempDir();
      const gw = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': settle }));
      await dropFirstCharge(sim);
      const id = uniq();
      const workflowId = `wf-hold-${id}`;
      const invoiceId = `INV-H${id}`;
      const first = await submit(gw, { workflowId, step: 1, tool: 'payments.charge', args: { invoiceId, amount: 4900 } });
      expect(first.body).toMatchObject({ status: 'unknown', state: 'unknown' });

      const repaired = { workflowId, step: 2, tool: 'payments.charge', args: { invoiceId, amount: 5000 } };
      const held = await submit(gw, repaired);
      expect(held.status).toBe(200);
      expect(held.body).toMatchObject({ status: 'unknown', state: 'held', reference: first.body.effectId });
      expect(held.body.message).toBe(`being checked: payments.charge for invoice ${invoiceId} from step 1 is not confirmed yet (reference ${first.body.effectId}); nothing was sent for step 2. Do not start another payments.charge for invoice ${invoiceId}.`);
      // Asking again while step 1 is open changes nothing.
      expect((await submit(gw, repaired)).body).toMatchObject({ status: 'unknown', state: 'held' });
      expect(await posts(sim)).toHaveLength(1);
      expect(await charges(sim, invoiceId)).toHaveLength(1);
      const heldEvent = (await timeline(gw, workflowId)).find((e) => e.type === 'EffectHeld')!.event;
      expect(heldEvent).toMatchObject({ effectId: held.body.effectId, matchedEffectId: first.body.effectId, basis: 'target', scope: 'workflow' });

      // Step 1 settles by lookup: committed.
      const step1 = await reaches(gw, first.body.effectId, SETTLED);
      expect(step1.state).toBe('committed');
      // Reading step 2 now: nothing was sent, and it is already done (the invoice had its charge in step 1).
      const read = await effectState(gw, held.body.effectId);
      expect(read).toMatchObject({ status: 'done', state: 'held', receipt: step1.receipt });
      expect(read.message).toBe(`already done: invoice ${invoiceId} already had payments.charge in step 1 (receipt ${step1.receipt}); nothing was sent for step 2. To do it again on purpose, resubmit with "repeat": {"reason": "…"}.`);
      // Resubmitted as it was: a held step is never sent by a release; still one charge.
      const again = await submit(gw, repaired);
      expect(again.body).toMatchObject({ status: 'done', state: 'held', effectId: held.body.effectId });
      expect(await charges(sim, invoiceId)).toHaveLength(1);
      expect((await timeline(gw, workflowId)).some((e) => e.type === 'EffectReleased')).toBe(false);
      // Declared a repeat on a new submission of the step: released and sent.
      const sent = await submit(gw, { ...repaired, repeat: { reason: 'a second charge on purpose' } });
      expect(sent.body).toMatchObject({ status: 'done', state: 'committed', effectId: held.body.effectId });
      expect(sent.body.message).toBe(`done: payments.charge for invoice ${invoiceId} happened (receipt ${sent.body.receipt}).`);
      expect(sent.body.receipt).not.toBe(step1.receipt);
      const released = (await timeline(gw, workflowId)).find((e) => e.type === 'EffectReleased')!.event;
      expect(released).toMatchObject({ effectId: held.body.effectId, releasedBy: 'default-agent' });
      expect(released.reason).toMatch(/declared it a repeat/);
      expect((await charges(sim, invoiceId)).map((c) => c.amount).sort()).toEqual([4900, 5000]);
    });

    it('a declared repeat is not held, and an operator can release a held step; an agent cannot', async () => {
      const sim = await payments({ searchLagMs: 1_500 });
      const dataDir = tempDir();
      const gw = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': settle }));
      await dropFirstCharge(sim);
      const id = uniq();
      const workflowId = `wf-pass-${id}`;
      const invoiceId = `INV-P${id}`;
      const first = await submit(gw, { workflowId, step: 1, tool: 'payments.charge', args: { invoiceId, amount: 4900 } });
      expect(first.body.state).toBe('unknown');
      // Fails before the change: step 2 would be charged, not held.
      const held = await submit(gw, { workflowId, step: 2, tool: 'payments.charge', args: { invoiceId, amount: 5000 } });
      expect(held.body).toMatchObject({ status: 'unknown', state: 'held' });
      expect(await charges(sim, invoiceId)).toHaveLength(1);

      const repeat = await submit(gw, { workflowId, step: 3, tool: 'payments.charge', args: { invoiceId, amount: 1200 }, repeat: { reason: 'the late fee, on purpose' } });
      expect(repeat.body).toMatchObject({ status: 'done', state: 'committed' });
      expect(await charges(sim, invoiceId)).toHaveLength(2);

      const release = (headers: Record<string, string>) => postJson(`${gw.url}/v1/effects/${held.body.effectId}/release`, { reason: 'the customer confirmed the corrected amount by phone' }, headers);
      expect((await release(gw.agent)).status).toBe(403);
      expect(await charges(sim, invoiceId)).toHaveLength(2);
      const released = await release(gw.operator);
      expect(released.status).toBe(200);
      expect(released.body).toMatchObject({ status: 'done', state: 'committed' });
      expect((await charges(sim, invoiceId)).map((c) => c.amount).sort((a, b) => a - b)).toEqual([1200, 4900, 5000]);
    });

    // Before: `concurrentTargets` was not a contract field (the strict schema refused the config).
    it('a tool that declares concurrentTargets is not held on its target (identical content still is)', async () => {
      const sim = await payments({ searchLagMs: 1_500 });
      const dataDir = tempDir();
      const gw = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': { ...settle, concurrentTargets: true, committedPerTarget: 'many' } }));
      expect(gw.runtime.tools.get('payments.charge')!.spec.concurrentTargets).toBe(true);
      await dropFirstCharge(sim);
      const id = uniq();
      const workflowId = `wf-conc-${id}`;
      const invoiceId = `INV-C${id}`;
      const first = await submit(gw, { workflowId, step: 1, tool: 'payments.charge', args: { invoiceId, amount: 4900 } });
      expect(first.body.state).toBe('unknown');
      const other = await submit(gw, { workflowId, step: 2, tool: 'payments.charge', args: { invoiceId, amount: 5000 } });
      expect(other.body).toMatchObject({ status: 'done', state: 'committed' });
      const same = await submit(gw, { workflowId, step: 3, tool: 'payments.charge', args: { invoiceId, amount: '49.00 USD' } });
      expect(same.body).toMatchObject({ status: 'unknown', state: 'held', reference: first.body.effectId });
      expect((await charges(sim, invoiceId)).map((c) => c.amount).sort()).toEqual([4900, 5000]);
    });
  });

  // Before: a replayed stored 500 made the effect terminal_failure and reconciliation stopped, so a
  // charge that became searchable later could only be settled by an operator.
  it('3. commit-then-500 with search lag: the resend meets the stored 500 (poisoned key), lookups go on, and it settles committed with the charge\'s receipt, no human', async () => {
    // The charge is created at once but searchable only after 3.5 s. The settle window (2 s) ends
    // before that: effectd looks up, then resends once under the key (as designed), meets the
    // replayed 500 and stops sending; the lookups after it, through a settle window counted from
    // the resend, find the charge.
    const sim = await payments({ searchLagMs: 3_500 });
    const dataDir = tempDir();
    const gw = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': { settleWindowMs: 2_000 } }));
    await arm(sim, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'status', status: 500, afterCommit: true } }]);
    const id = uniq();
    const cmd = { workflowId: `wf-c500-${id}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-K${id}`, amount: 4900 } };
    const first = await submit(gw, cmd);
    expect(first.body).toMatchObject({ status: 'unknown', state: 'unknown' });
    // The simulator's ground truth: charged, and a 500 answered.
    expect(await charges(sim, cmd.args.invoiceId)).toHaveLength(1);

    await reaches(gw, first.body.effectId, ['terminal_failure', 'committed', 'escalated'], 6_000);
    const done = await reaches(gw, first.body.effectId, ['committed', 'escalated'], 8_000);
    const truth = await charges(sim, cmd.args.invoiceId);
    expect(truth).toHaveLength(1);
    expect(done).toMatchObject({ state: 'committed', status: 'done', receipt: truth[0]!.id });
    expect(done.resolvedBy).toBeUndefined();
    expect(done.reason).toMatch(/found at the provider/);
    const events = await timeline(gw, cmd.workflowId);
    expect(events.map((e) => e.type)).not.toContain('EffectEscalated');
    expect(events.map((e) => e.type)).not.toContain('EffectResolved');
    // Attempt 1: a first-hand 500 (unknown); attempt 2, the one resend: the replayed 500 (poisoned); then found by lookup.
    expect(events.filter((e) => e.type === 'AttemptFinished').map((e) => e.event.outcome)).toEqual(['unknown', 'terminal_failure']);
    const checks = events.filter((e) => e.type === 'ReconciliationChecked').map((e) => e.event);
    expect(checks[checks.length - 1]).toMatchObject({ verdict: 'committed', receipt: truth[0]!.id });
    const resentAt = events.filter((e) => e.type === 'AttemptStarted')[1]!.event.at as number;
    expect(checks.filter((c) => c.at >= resentAt).length).toBeGreaterThan(0);
    // No resend after the key was poisoned.
    await sleep(400);
    expect((await posts(sim)).map((r) => [r.status, r.replayed])).toEqual([[500, false], [500, true]]);
  });

  describe('4. a tool without replayHeader: resends are capped, then a human decides', () => {
    // The provider stores the 500 (nothing charged) and replays it to every same-key resend, but
    // without replayHeader effectd cannot tell a replay from a fresh 500: each one is `unknown`.
    const storedFailure = (sim: RunningSimulator) => arm(sim, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'status', status: 500, afterExecutionBegan: true } }]);
    const noReplayHeader = { replayHeader: undefined, settleWindowMs: 300 }; // undefined: dropped from the written config

    // Before: a resend once per settle window for as long as the key lived (24 h), "checking" all
    // along; this config (no `resends`: the defaults) was accepted then, and never escalated.
    it('the default cap (resends.max 3): three resends, then escalated with the evidence and a reason naming the cap', async () => {
      const sim = await payments({ searchLagMs: 0 });
      const dataDir = tempDir();
      const gw = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': noReplayHeader }));
      expect(gw.runtime.tools.get('payments.charge')!.spec.replayHeader).toBeUndefined();
      await storedFailure(sim);
      const id = uniq();
      const cmd = { workflowId: `wf-cap-${id}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-M${id}`, amount: 4900 } };
      const first = await submit(gw, cmd);
      expect(first.body).toMatchObject({ status: 'unknown', state: 'unknown' });

      const escalated = await reaches(gw, first.body.effectId, SETTLED, 10_000);
      expect(escalated).toMatchObject({ state: 'escalated', status: 'unknown', attempts: 4 });
      expect(escalated.reason).toMatch(/re-sent 3 time\(s\) under the same key without a definitive answer \(the contract's resends\.max is 3\)/);
      expect(escalated.message).toMatch(/with a human.*Do not start another payments\.charge for invoice INV-M/);
      const event = (await timeline(gw, cmd.workflowId)).find((e) => e.type === 'EffectEscalated')!.event;
      expect(event.evidence).toMatch(/lookup-by-reference: 0 matches/);
      const queue = (await getJson(`${gw.url}/v1/effects?state=escalated`, gw.operator)).body.effects as { effectId: string }[];
      expect(queue.map((e) => e.effectId)).toContain(first.body.effectId);
      // At the provider: the first request and at most resends.max resends, each a replay of the stored 500.
      await sleep(800);
      const sent = await posts(sim);
      expect(sent).toHaveLength(4);
      expect(sent.map((r) => [r.status, r.replayed])).toEqual([[500, false], [500, true], [500, true], [500, true]]);
      expect(await charges(sim)).toHaveLength(0);
      // The agent's resubmission sends nothing more.
      expect((await submit(gw, cmd)).body).toMatchObject({ state: 'escalated', status: 'unknown' });
      expect(await posts(sim)).toHaveLength(4);
    });

    it('the time cap (resends.withinMs): no resend later than withinMs after the first dispatch, then escalated naming it', async () => {
      const sim = await payments({ searchLagMs: 0 });
      const dataDir = tempDir();
      const gw = await effectd(dataDir, writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': { ...noReplayHeader, resends: { max: 100, withinMs: 1_000 } } }));
      await storedFailure(sim);
      const id = uniq();
      const cmd = { workflowId: `wf-within-${id}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-W${id}`, amount: 4900 } };
      const first = await submit(gw, cmd);
      expect(first.body.state).toBe('unknown');

      const escalated = await reaches(gw, first.body.effectId, SETTLED, 10_000);
      expect(escalated.state).toBe('escalated');
      expect(escalated.reason).toMatch(/the first dispatch was 1000 ms or more ago \(the contract's resends\.withinMs\)/);
      const started = (await timeline(gw, cmd.workflowId)).filter((e) => e.type === 'AttemptStarted').map((e) => e.event.at as number);
      expect(started.length).toBeGreaterThan(1);
      for (const at of started) expect(at - started[0]!).toBeLessThan(1_000);
      await sleep(500);
      expect(await posts(sim)).toHaveLength(started.length);
    });
  });
});
