// Issue 25, "Must show", rules 2, 3 and 4, on the simulated providers with effectd in-process:
// (2) an escalated effect is still looked up on a slowing schedule and settles by itself when the
//     charge lands, without a human; the operator queue and the agent's answer follow;
// (3) a request that reaches the provider after a consistent lookup proved it absent (held in a
//     TCP proxy past the settle window) is found by the absence audit, recorded as a late arrival,
//     queued with its undo, counted, logged, and shown on the next answer for that step;
// (4) `409 idempotency_key_in_use` answers to same-key resends spend no resend budget: the schedule
//     waits for the holder and the effect settles committed, one charge.
// The rules are the core's (src/core/reconcile-schedule.ts, src/core/next-step.ts); this spec only
// watches them from the outside: effectd's HTTP API, /metrics, its log, and the providers' oracles.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { METRIC } from '../../src/metrics/metric-names.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, startPayments, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';
import { startHoldingProxy } from '../support/holding-proxy.js';
import { parsePromText, total } from '../support/prom-text.js';

interface TimelineEntry { type: string; event: Record<string, any> }
interface Charge { id: string; amount: number; createdAtMs: number; metadata: Record<string, string> }
interface LoggedRequest { seq: number; receivedAt: number; method: string; path: string; idempotencyKey: string | null; status: number | string; replayed: boolean }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;
const uniq = () => `${process.pid}-${Date.now().toString(36)}-${++n}`;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

/** effectd in-process with a fast reconciler tick and its log captured (JSON lines, info and up). */
async function effectdWithLog(configFile: string): Promise<{ effectd: InProcessEffectd; log: string[] }> {
  const log: string[] = [];
  const logger = createLogger({ fd: 2, log: { level: 'info' }, stream: { write: (line: string) => void log.push(line) } });
  const dataDir = tempDir();
  const effectd = await startEffectd({ dataDir, configFile, reconcileTickMs: 25, logger });
  open.push(effectd);
  return { effectd, log };
}

const submit = (effectd: InProcessEffectd, body: Record<string, unknown>) => postJson(`${effectd.url}/v1/effects`, body, { ...effectd.agent, prefer: 'wait=0' });
const effectOf = async (effectd: InProcessEffectd, effectId: string) => (await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.operator)).body;
const timelineOf = async (effectd: InProcessEffectd, workflowId: string) => (await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.agent)).body.timeline as TimelineEntry[];
const attentionQueue = async (effectd: InProcessEffectd) => ((await getJson(`${effectd.url}/v1/effects?state=attention`, effectd.operator)).body.effects as { effectId: string }[]).map((e) => e.effectId);
const metric = async (effectd: InProcessEffectd, name: string, where: Record<string, string>) => total(parsePromText((await getJson(`${effectd.url}/metrics`)).body), name, where);
const oracle = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body;
const requestsAt = async (sim: RunningSimulator) => ((await getJson(`${sim.url}/_admin/requests`)).body as { requests: LoggedRequest[] }).requests;
const arm = async (sim: RunningSimulator, rules: unknown[]) => expect((await postJson(`${sim.url}/_admin/faults`, { rules })).status).toBe(200);

async function reaches(effectd: InProcessEffectd, effectId: string, states: string[], timeoutMs: number) {
  return waitFor(`effect ${effectId} to reach ${states.join('|')}`, async () => {
    const effect = await effectOf(effectd, effectId);
    return states.includes(effect.state) ? { effect, at: Date.now() } : undefined;
  }, timeoutMs, 25);
}

/** The events of one effect, in order, as `+ms type verdict/outcome` from its first event: what a report quotes when a rule misbehaves. */
function story(timeline: TimelineEntry[], effectId: string): string[] {
  const mine = timeline.filter((e) => e.event.effectId === effectId);
  const t0 = mine[0]?.event.at ?? 0;
  return mine.map((e) => `+${e.event.at - t0}ms ${e.type}${e.event.verdict ? ` ${e.event.verdict}` : ''}${e.event.outcome ? ` ${e.event.outcome}` : ''}${e.event.httpStatus ? ` (HTTP ${e.event.httpStatus})` : ''}${e.event.receipt ? ` ${e.event.receipt}` : ''}`);
}

describe('rule 2: an escalated effect is still looked up, and evidence settles it without a human', () => {
  // The provider holds the first charge for HOLD_MS (the key in flight, nothing charged yet); the
  // contract allows no resend, so after the settle window effectd escalates. The charge lands later;
  // the watch (first look a settle window after the escalation, then doubling) finds it.
  const TIMEOUT_MS = 1_000;
  const WINDOW_MS = 1_000;
  const HOLD_MS = 4_000;

  it('held 4 s past a 1 s timeout and a 1 s window: escalated, then the charge lands, a later lookup settles it committed; no resolvedBy, off the operator queue, the agent reads done, the metric counts it', async () => {
    const sim = await startPayments({ searchLagMs: 0 });
    open.push(sim);
    const dir = tempDir();
    const { effectd } = await effectdWithLog(writeToolsConfig(dir, { payments: sim.url }, { 'payments.charge': { timeoutMs: TIMEOUT_MS, settleWindowMs: WINDOW_MS, resends: { max: 0 } } }));
    await arm(sim, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'delay', ms: HOLD_MS } }]);
    const settledByLookup = { tool: 'payments.charge', by: 'lookup' };
    expect(await metric(effectd, METRIC.escalationsSettled, settledByLookup)).toBe(0);

    const id = uniq();
    const cmd = { workflowId: `wf-watch-${id}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-W${id}`, amount: 4900 } };
    const first = await submit(effectd, cmd);
    expect(first.body).toMatchObject({ status: 'unknown', state: 'unknown' });
    const effectId = first.body.effectId as string;

    // Escalated while the provider still holds the request: nothing is charged yet.
    const { effect: escalated, at: escalatedSeenAt } = await reaches(effectd, effectId, ['escalated', 'committed'], 6_000);
    const report = async () => JSON.stringify({ story: story(await timelineOf(effectd, cmd.workflowId), effectId), charges: (await oracle(sim)).charges });
    expect(escalated.state, await report()).toBe('escalated');
    expect((await oracle(sim)).charges).toHaveLength(0);
    expect(await attentionQueue(effectd)).toContain(effectId);
    expect((await submit(effectd, cmd)).body).toMatchObject({ status: 'unknown', state: 'escalated' });

    // The charge lands; nobody touches the effect; a later lookup settles it.
    const { effect: settled } = await reaches(effectd, effectId, ['committed', 'failed_before_effect'], 15_000);
    const charges = (await oracle(sim)).charges as Charge[];
    expect(charges, await report()).toHaveLength(1);
    expect(settled, await report()).toMatchObject({ state: 'committed', status: 'done', receipt: charges[0]!.id });
    expect(settled.resolvedBy).toBeUndefined();
    expect(settled.reason).toMatch(/found at the provider/);
    // The escalation came before the charge existed: it was evidence that appeared later that settled it.
    const timeline = await timelineOf(effectd, cmd.workflowId);
    const events = timeline.filter((e) => e.event.effectId === effectId);
    const escalation = events.find((e) => e.type === 'EffectEscalated')!.event;
    expect(escalation.at).toBeLessThan(charges[0]!.createdAtMs);
    expect(escalation.at).toBeLessThanOrEqual(escalatedSeenAt);
    expect(events.map((e) => e.type)).not.toContain('EffectResolved');
    const found = events.filter((e) => e.type === 'ReconciliationChecked' && e.event.verdict === 'committed').map((e) => e.event);
    expect(found).toHaveLength(1);
    expect(found[0]!.at).toBeGreaterThan(escalation.at);
    // The watch looked at least once before the charge landed, on its own schedule (not a resend: none is allowed).
    expect(events.filter((e) => e.type === 'ReconciliationChecked' && e.event.at > escalation.at).length, await report()).toBeGreaterThanOrEqual(1);
    expect(events.filter((e) => e.type === 'AttemptStarted')).toHaveLength(1);

    // The operator's queue follows, the agent's next answer is done, the metric counts it, and a human's resolution is no longer taken.
    console.log(`rule 2: ${await report()}`);
    expect(await attentionQueue(effectd)).not.toContain(effectId);
    const again = await submit(effectd, cmd);
    expect(again.body).toMatchObject({ status: 'done', state: 'committed', receipt: charges[0]!.id, effectId });
    expect(await metric(effectd, METRIC.escalationsSettled, settledByLookup)).toBe(1);
    expect(await metric(effectd, METRIC.escalationsSettled, { tool: 'payments.charge', by: 'human' })).toBe(0);
    const late = await postJson(`${effectd.url}/v1/effects/${effectId}/resolve`, { outcome: 'committed', receipt: charges[0]!.id, reason: 'found it in the dashboard' }, effectd.operator);
    expect(late.status, JSON.stringify(late.body)).toBeGreaterThanOrEqual(400);
    expect((await effectOf(effectd, effectId)).resolvedBy).toBeUndefined();
    expect((await requestsAt(sim)).filter((r) => r.method === 'POST')).toHaveLength(1);
  }, 30_000);
});

interface LateCase {
  tool: string;
  provider: 'payments' | 'weak';
  /** The request line of the mutation (the holding proxy matches it). */
  mutation: string;
  args: (id: string) => Record<string, unknown>;
  /** The provider's own objects of this intent, each with the receipt effectd would record for it. */
  objects: (oracle: any, args: Record<string, unknown>) => { receipt: string; ref?: string }[];
  /** Re-declared with no key and a consistent lookup (the built-in append-line already is). */
  keyless: boolean;
  /** What the operator does with the late object: compensate when the contract names an undo. */
  action: 'compensate' | 'keep';
}

const LATE_CASES: LateCase[] = [
  {
    tool: 'payments.charge', provider: 'payments', mutation: 'POST /v1/charges ', keyless: true, action: 'compensate',
    args: (id) => ({ invoiceId: `INV-L${id}`, amount: 4900 }),
    objects: (o, args) => (o.charges as Charge[]).filter((c) => c.metadata.invoice_id === args.invoiceId).map((c) => ({ receipt: c.id, ref: c.metadata.effectd_ref })),
  },
  {
    tool: 'weak.append-line', provider: 'weak', mutation: 'POST /append-line ', keyless: false, action: 'keep',
    args: (id) => ({ file: `late-${id}.log`, about: `ORD-${id} handed to the carrier`, line: `ORD-${id} handed to the carrier` }),
    // A journal line has no id: effectd's receipt for it is the reference stamped into it.
    objects: (o, args) => (o.lines as { file: string; line: string }[]).filter((l) => l.file === args.file).map((l) => {
      const ref = /\[ref:([^\]]+)\]/.exec(l.line)?.[1];
      return { receipt: `ref:${ref}`, ...(ref ? { ref } : {}) };
    }),
  },
];

describe('rule 3: a proof of absence is audited once more; a late arrival is detected, queued with its undo, counted, logged and answered', () => {
  const TIMEOUT_MS = 1_000;
  const WINDOW_MS = 1_000;
  const AUDIT_MS = 3_000;
  /** After the request reached the proxy: past the timeout + window (≈ 2 s, when effectd proves it absent) and past the agent's new step. */
  const HOLD_MS = 3_200;

  for (const c of LATE_CASES) {
    it(`${c.tool}: its first request reaches the provider ${HOLD_MS} ms late, after effectd answered not_done and the agent's new step did it again; the audit finds it (${c.action})`, async () => {
      const sim = await startSimulator(c.provider, c.provider === 'payments' ? { options: { searchLagMs: 0 } } : {});
      open.push(sim);
      const proxy = await startHoldingProxy(sim.url);
      open.push(proxy);
      const dir = tempDir();
      const configFile = writeToolsConfig(dir, { [c.provider]: proxy.url }, { [c.tool]: { timeoutMs: TIMEOUT_MS, settleWindowMs: WINDOW_MS, absenceAuditMs: AUDIT_MS } });
      if (c.keyless) {
        // writeToolsConfig merges objects; a contract with no key replaces the idempotency block whole.
        const config = JSON.parse(readFileSync(configFile, 'utf8'));
        const tool = config.tools.find((t: { name: string }) => t.name === c.tool);
        tool.idempotency = { kind: 'none' };
        tool.lookup.consistent = true;
        writeFileSync(configFile, JSON.stringify(config));
      }
      const { effectd, log } = await effectdWithLog(configFile);
      expect(effectd.runtime.tools.get(c.tool)!.spec.lookup).toMatchObject({ consistent: true });
      expect(effectd.runtime.tools.get(c.tool)!.spec.idempotency.kind).toBe('none');
      const lateMetric = () => metric(effectd, METRIC.lateArrivals, { tool: c.tool });
      expect(await lateMetric()).toBe(0);

      const id = uniq();
      const workflowId = `wf-late-${id}`;
      const args = c.args(id);
      const step1 = { workflowId, step: 1, tool: c.tool, args };
      proxy.holdNext((line) => line.startsWith(c.mutation), HOLD_MS);
      const first = await submit(effectd, step1);
      expect(first.body).toMatchObject({ status: 'unknown' });
      const effectId = first.body.effectId as string;
      const report = async () => JSON.stringify({ story: story(await timelineOf(effectd, workflowId), effectId), held: proxy.held, objects: c.objects(await oracle(sim), args) });

      // effectd proves it absent (a consistent lookup after the settle window) and says not_done.
      const { effect: absent, at: notDoneAt } = await reaches(effectd, effectId, ['failed_before_effect', 'committed', 'escalated'], 6_000);
      expect(absent, await report()).toMatchObject({ state: 'failed_before_effect', status: 'not_done' });
      expect(proxy.held[0]?.forwardedAt, 'the held request has not reached the provider yet').toBeUndefined();
      // The agent does it again under a new step: nothing holds a step whose match proved not to have happened.
      const step2 = await submit(effectd, { ...step1, step: 2 });
      expect(step2.body, await report()).toMatchObject({ status: 'done', state: 'committed' });

      // The first request's bytes reach the provider now: two objects for one intent.
      await proxy.drained();
      const [hold] = proxy.held;
      expect(hold!.forwardedAt! - notDoneAt, await report()).toBeGreaterThan(0);
      expect(hold!.replyStatusLine).toMatch(/^HTTP\/1\.1 200/);
      const objects = c.objects(await oracle(sim), args);
      expect(objects, await report()).toHaveLength(2);
      const late = objects.find((o) => o.ref === effectId)!;
      expect(late, await report()).toBeDefined();
      expect(objects.find((o) => o.ref === step2.body.effectId)?.receipt).toBe(step2.body.receipt);

      // The audit (AUDIT_MS after the proof) finds it: committed with that receipt, as a late arrival.
      const { effect: found } = await reaches(effectd, effectId, ['committed'], AUDIT_MS + 4_000);
      expect(found, await report()).toMatchObject({ state: 'committed', status: 'done', receipt: late.receipt, lateArrival: { receipt: late.receipt } });
      expect(found.resolvedBy).toBeUndefined();
      expect(found.message).toMatch(/happened after all/);
      expect(found.duplicates).toMatchObject({ receipts: [late.receipt], unhandled: [late.receipt], handled: {} });
      if (c.action === 'compensate') expect(found.duplicates.undoTool).toBe('payments.refund');
      else expect(found.duplicates.undoTool).toBeUndefined();
      const events = (await timelineOf(effectd, workflowId)).filter((e) => e.event.effectId === effectId);
      const detected = events.find((e) => e.type === 'LateArrivalDetected')!.event;
      const proof = events.find((e) => e.type === 'ReconciliationChecked' && e.event.verdict === 'not_committed')!.event;
      expect(detected).toMatchObject({ receipt: late.receipt, provenAbsentAt: proof.at });
      expect(proof.at).toBeLessThanOrEqual(notDoneAt);
      expect(detected.at - detected.provenAbsentAt).toBeGreaterThanOrEqual(AUDIT_MS);
      expect(events.map((e) => e.type)).not.toContain('AbsenceAudited');
      expect(await lateMetric()).toBe(1);
      expect(await attentionQueue(effectd)).toContain(effectId);
      const logged = log.map((l) => JSON.parse(l) as { level: string | number; msg: string; effectId?: string }).filter((l) => /^LATE ARRIVAL/.test(l.msg));
      expect(logged, log.join('')).toHaveLength(1);
      expect(logged[0]!.msg).toContain(late.receipt);
      expect(logged[0]!.level === 'error' || logged[0]!.level === 50).toBe(true);

      console.log(`rule 3 (${c.tool}): ${await report()}`);
      // The next answer for step 1 says it happened after all; step 2 stays done.
      const again = await submit(effectd, step1);
      expect(again.body).toMatchObject({ status: 'done', state: 'committed', receipt: late.receipt, effectId });
      expect(again.body.message).toMatch(/happened after all/);
      expect((await submit(effectd, { ...step1, step: 2 })).body).toMatchObject({ status: 'done', receipt: step2.body.receipt });

      // An operator deals with it (an agent may not); then it is off the queue.
      const url = `${effectd.url}/v1/effects/${effectId}/duplicates/${encodeURIComponent(late.receipt)}`;
      expect((await postJson(url, { action: c.action, reason: 'late arrival' }, effectd.agent)).status).toBe(403);
      const handled = await postJson(url, { action: c.action, reason: c.action === 'keep' ? 'both journal lines stay; the second one is annotated by hand' : 'the customer was charged twice: refund the late one' }, effectd.operator);
      expect(handled.status, JSON.stringify(handled.body)).toBe(200);
      expect(handled.body.duplicates).toMatchObject({ unhandled: [], handled: { [late.receipt]: { action: c.action === 'keep' ? 'kept' : 'compensated' } } });
      expect(await attentionQueue(effectd)).not.toContain(effectId);
      if (c.action === 'compensate') {
        const compensation = handled.body.duplicates.handled[late.receipt].compensationEffectId as string;
        expect(compensation).toBeDefined();
        expect(await effectOf(effectd, compensation)).toMatchObject({ status: 'done', tool: 'payments.refund' });
        const refunds = (await oracle(sim)).refunds as { charge: string }[];
        expect(refunds.map((r) => r.charge)).toEqual([late.receipt]);
      }
      // Handled once.
      expect((await postJson(url, { action: 'keep', reason: 'again' }, effectd.operator)).status).toBeGreaterThanOrEqual(400);
    }, 30_000);
  }
});

describe('rule 4: a 409 "this key is in flight" is evidence, not a resend', () => {
  // The provider holds the first charge HOLD_MS with its key in flight: every same-key resend meanwhile
  // is answered 409 idempotency_key_in_use (packages/simulators/src/stripe-idempotency.ts). resends.max is 1.
  const TIMEOUT_MS = 500;
  const WINDOW_MS = 500;
  const HOLD_MS = 3_500;

  it('resends.max 1 and three or more 409s: not escalated, the resends wait for the holder (doubling), and it settles committed with the one charge', async () => {
    const sim = await startPayments({ searchLagMs: 0 });
    open.push(sim);
    const dir = tempDir();
    const { effectd } = await effectdWithLog(writeToolsConfig(dir, { payments: sim.url }, { 'payments.charge': { timeoutMs: TIMEOUT_MS, settleWindowMs: WINDOW_MS, resends: { max: 1 } } }));
    expect(effectd.runtime.tools.get('payments.charge')!.spec.resends.max).toBe(1);
    await arm(sim, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'delay', ms: HOLD_MS } }]);

    const id = uniq();
    const cmd = { workflowId: `wf-409-${id}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-C${id}`, amount: 4900 } };
    const first = await submit(effectd, cmd);
    expect(first.body).toMatchObject({ status: 'unknown' });
    const effectId = first.body.effectId as string;
    const report = async () => JSON.stringify({ story: story(await timelineOf(effectd, cmd.workflowId), effectId), requests: (await requestsAt(sim)).filter((r) => r.method === 'POST').map((r) => [r.receivedAt, r.status, r.replayed]) });

    // Never escalated while the holder works: it waits, then settles committed.
    const watching = (async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 400; i++) {
        const e = await effectOf(effectd, effectId);
        seen.add(e.state);
        if (e.state === 'committed' || e.state === 'failed_before_effect') break;
        await sleep(25);
      }
      return seen;
    })();
    const { effect: settled } = await reaches(effectd, effectId, ['committed', 'failed_before_effect'], HOLD_MS + 8_000);
    const states = await watching;
    const charges = (await oracle(sim)).charges as Charge[];
    expect(charges, await report()).toHaveLength(1);
    expect(settled, await report()).toMatchObject({ state: 'committed', status: 'done', receipt: charges[0]!.id });
    expect([...states], await report()).not.toContain('escalated');

    console.log(`rule 4: ${await report()}`);
    const events = (await timelineOf(effectd, cmd.workflowId)).filter((e) => e.event.effectId === effectId);
    expect(events.map((e) => e.type), await report()).not.toContain('EffectEscalated');
    const finished = events.filter((e) => e.type === 'AttemptFinished').map((e) => e.event);
    const inFlight = finished.filter((f) => f.httpStatus === 409);
    // More same-key resends than resends.max: the 409s did not count.
    expect(inFlight.length, await report()).toBeGreaterThanOrEqual(3);
    for (const f of inFlight) expect(f.outcome).toBe('unknown');
    const counted = finished.slice(1).filter((f) => f.httpStatus !== 409);
    expect(counted.length, await report()).toBeLessThanOrEqual(1);
    // Each resend after a 409 waited for the holder: 500 ms, then doubling (1 s, …) after each 409 in a row.
    const starts = events.filter((e) => e.type === 'AttemptStarted').map((e) => e.event.at as number);
    const inFlightAt = inFlight.map((f) => f.at as number);
    for (let i = 0; i < inFlightAt.length; i++) {
      const next = starts.find((s) => s > inFlightAt[i]!);
      if (next === undefined) continue;
      expect(next - inFlightAt[i]!, `${await report()}: resend after 409 #${i + 1}`).toBeGreaterThanOrEqual(Math.min(500 * 2 ** i, 30_000) - 5);
    }
    // At the provider: the held first request charged once; every resend meanwhile got 409 (or the stored answer, replayed).
    const posts = (await requestsAt(sim)).filter((r) => r.method === 'POST');
    expect(posts[0]!.status).toBe(200);
    for (const r of posts.slice(1)) expect(r.status === 409 || (r.status === 200 && r.replayed), JSON.stringify(r)).toBe(true);
    expect(posts.filter((r) => r.status === 409).length).toBe(inFlight.length);
    expect(await attentionQueue(effectd)).not.toContain(effectId);
    expect((await submit(effectd, cmd)).body).toMatchObject({ status: 'done', receipt: charges[0]!.id });
  }, 30_000);
});
