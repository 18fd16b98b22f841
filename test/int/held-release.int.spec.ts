// Issue 32, "Must show": a killed and resumed agent decides a charge again with the amount
// respelled, copies what effectd's refusal states first, and is held; when step 1 commits, the
// held step is never sent by a release ("already done", one charge at the provider); only a
// declared repeat sends it. Over HTTP (POST /v1/effects) and over MCP (tools/call, the official
// client). The model is packages/bench/src/respelling.ts, the one the benchmark's scripted agent uses.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextSpelling, amountSpellings } from '../../packages/bench/src/respelling.js';
import { parseMinorUnits } from '../../src/core/money.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, startPayments, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

interface TimelineEntry { type: string; effectId?: string; summary: string; event: Record<string, any> }

/** The provider holds the charge (the key in flight) until its clock is pushed past 60 s: then it commits, and the socket is cut. */
const HOLD_MS = 60_000;
/** The two readings of "4900" for USD, as the refusal states them: 49.00 USD (4900 minor units), then 4,900.00 USD. */
const READINGS = [4_900, 490_000];

describe('a held step is never sent by a release (issue 32)', () => {
  let sim: RunningSimulator;
  let gw: InProcessEffectd;

  const posts = async () => ((await getJson(`${sim.url}/_admin/requests`)).body.requests as { method: string; path: string }[]).filter((r) => r.method === 'POST' && r.path.startsWith('/v1/charges')).length;
  const charges = async (invoiceId: string) => ((await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; amount: number; metadata: Record<string, string> }[]).filter((c) => c.metadata.invoice_id === invoiceId);
  const holdNextCharge = () => postJson(`${sim.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'late-commit', commitAfterMs: HOLD_MS } }] });
  const providerReleases = () => postJson(`${sim.url}/_admin/clock`, { advanceMs: HOLD_MS + 1_000 });
  const effect = async (effectId: string) => (await getJson(`${gw.url}/v1/effects/${effectId}`, gw.agent)).body;
  const timeline = async (workflowId: string) => (await getJson(`${gw.url}/v1/workflows/${workflowId}`, gw.agent)).body.timeline as TimelineEntry[];
  const committed = (effectId: string) => waitFor(`${effectId} to commit`, async () => ((await effect(effectId)).state === 'committed' ? effect(effectId) : undefined), 20_000, 100);

  beforeAll(async () => {
    sim = await startPayments({ searchLagMs: 0 });
    const dataDir = tempDir();
    // A short timeout makes step 1 unknown while the provider holds it; the settle window (default 120 s) outlasts the test: no resend, no escalation.
    gw = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: sim.url }, { 'payments.charge': { timeoutMs: 600 } }) });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it('over HTTP: "4900" refused with both readings and step 1 first → the copied reading is held → step 1 commits → "already done", 1 charge → a declared repeat sends it', async () => {
    const workflowId = 'wf-issue32-http';
    const invoiceId = 'INV-3201';
    const submit = (step: number, amount: unknown, extra: Record<string, unknown> = {}) =>
      postJson(`${gw.url}/v1/effects`, { workflowId, step, tool: 'payments.charge', args: { invoiceId, amount }, ...extra }, { ...gw.agent, prefer: 'wait=0' });

    // Step 1: 4900 minor units; the provider holds the charge, effectd's call times out: unknown.
    await holdNextCharge();
    const step1 = await submit(1, 4900);
    expect(step1.body).toMatchObject({ status: 'unknown', state: 'unknown' });
    const step1Id = step1.body.effectId as string;

    // The agent is killed and resumed; the model decides again: a NEW step, the amount as bare digits.
    const tried: unknown[] = ['4900'];
    const refused = await submit(2, '4900');
    expect(refused.status).toBe(400);
    const refusal = refused.body.message as string;
    // What the workflow already did on that invoice comes first…
    expect(refusal.startsWith(`payments.charge for invoice ${invoiceId} from step 1 may have happened and is being checked. `)).toBe(true);
    expect(refused.body.onTarget).toMatchObject({ step: '1', effectId: step1Id, status: 'unknown' });
    // …then both readings, as values, neither named as the thing to write.
    expect(refusal).toContain('4,900.00 USD');
    expect(refusal).toContain('49.00 USD (4900 minor units)');
    expect(refusal).not.toMatch(/\bwrite\b/i);
    // Every spelling the refusal shows, fed back (as a string, and bare digits as a JSON number), is refused again or lands on a reading.
    for (const spelling of amountSpellings(refusal)) {
      for (const value of [spelling, ...(/^\d+$/.test(spelling) ? [Number(spelling)] : [])]) {
        const parsed = parseMinorUnits(value, 'usd');
        if (parsed.ok) expect(READINGS, `${JSON.stringify(value)} from: ${refusal}`).toContain(parsed.minor);
      }
    }

    // The model writes what the refusal states first: the smaller reading, 49.00 USD — step 1's own content.
    let answer = refused;
    for (let turn = 0; answer.status === 400 && turn < 4; turn++) {
      const spelling = nextSpelling(answer.body.message as string, tried as string[]);
      expect(spelling, `a spelling in: ${answer.body.message}`).toBeDefined();
      tried.push(spelling!);
      answer = await submit(2, spelling);
    }
    expect(tried).toEqual(['4900', '49.00 USD']);
    expect(answer.status).toBe(200);
    const heldId = answer.body.effectId as string;
    const declared = (await timeline(workflowId)).find((e) => e.type === 'EffectDeclared' && e.effectId === heldId)!.event;
    expect(declared.args.amount).toBe(4_900);
    // Held on its content (what step 1 does): being checked, nothing sent.
    expect(answer.body).toMatchObject({ status: 'unknown', state: 'held', reference: step1Id });
    expect(answer.body.message).toBe(`being checked: payments.charge for invoice ${invoiceId} from step 1 is not confirmed yet (reference ${step1Id}); nothing was sent for step 2. Do not start another payments.charge for invoice ${invoiceId}.`);

    // A worse model writes the other reading without its separators, the hundredfold amount, as step 3: held on the invoice.
    const worse = await submit(3, '4900.00 USD');
    expect(worse.status).toBe(200);
    const worseId = worse.body.effectId as string;
    expect(worse.body).toMatchObject({ status: 'unknown', state: 'held', reference: step1Id });
    // The agents, told "being checked", resubmit: still held, still one request at the provider.
    for (let i = 0; i < 2; i++) {
      expect((await submit(2, '49.00 USD')).body).toMatchObject({ status: 'unknown', state: 'held' });
      expect((await submit(3, '4900.00 USD')).body).toMatchObject({ status: 'unknown', state: 'held' });
    }
    expect(await posts()).toBe(1);

    // The provider releases the charge; step 1 settles committed (the reconciler's lookup finds it).
    await providerReleases();
    const one = await committed(step1Id);
    const truth = await charges(invoiceId);
    expect(truth).toHaveLength(1);
    expect(one).toMatchObject({ status: 'done', receipt: truth[0]!.id });

    // Reading the held steps, and resubmitting them (twice): already done, nothing sent for them.
    const sameContent = `already done: payments.charge for invoice ${invoiceId} happened in step 1 (receipt ${truth[0]!.id}); nothing was sent for step 2. To do it again on purpose, resubmit with "repeat": {"reason": "…"}.`;
    const sameTarget = `already done: invoice ${invoiceId} already had payments.charge in step 1 (receipt ${truth[0]!.id}); nothing was sent for step 3. To do it again on purpose, resubmit with "repeat": {"reason": "…"}.`;
    expect(await effect(heldId)).toMatchObject({ status: 'done', state: 'held', receipt: truth[0]!.id, reason: 'same content as step 1', message: sameContent });
    expect(await effect(worseId)).toMatchObject({ status: 'done', state: 'held', receipt: truth[0]!.id, reason: 'the same target as step 1, which is committed', message: sameTarget });
    for (let i = 0; i < 2; i++) {
      const again = await submit(2, '49.00 USD');
      expect(again.body).toMatchObject({ status: 'done', state: 'held', effectId: heldId, receipt: truth[0]!.id, reference: step1Id });
      expect(again.body.message).toBe(sameContent);
      expect((await submit(3, '4900.00 USD')).body.message).toBe(sameTarget);
    }
    // The provider holds exactly one charge: 49.00 USD, from step 1.
    expect(await posts()).toBe(1);
    expect((await charges(invoiceId)).map((c) => c.amount)).toEqual([4900]);
    // Before any repeat the ledger has no release and no attempt for the held steps.
    const before = (await timeline(workflowId)).filter((e) => e.effectId === heldId || e.effectId === worseId).map((e) => e.type);
    expect(before).not.toContain('EffectReleased');
    expect(before).not.toContain('AttemptStarted');

    // A declared repeat on a new submission of a held step sends it.
    const repeat = await submit(3, '4900.00 USD', { repeat: { reason: 'customer asked for a second charge' } });
    expect(repeat.body).toMatchObject({ status: 'done', state: 'committed', effectId: worseId });
    expect(repeat.body.receipt).not.toBe(truth[0]!.id);
    expect((await charges(invoiceId)).map((c) => c.amount).sort((a, b) => a - b)).toEqual([4900, 490_000]);
    expect(await posts()).toBe(2);

    // The ledger records each hold's basis exactly, and the release as the agent's declaration.
    const events = await timeline(workflowId);
    const held = events.filter((e) => e.type === 'EffectHeld');
    expect(held).toHaveLength(2);
    const byEffect = (id: string) => held.find((e) => e.effectId === id)!;
    expect(byEffect(heldId).event).toMatchObject({ matchedEffectId: step1Id, scope: 'workflow' });
    expect(byEffect(heldId).event.basis ?? 'content').toBe('content');
    expect(byEffect(heldId).summary).toMatch(/^held: the same content as step 1 \(/);
    expect(byEffect(worseId).event).toMatchObject({ matchedEffectId: step1Id, basis: 'target', scope: 'workflow' });
    expect(byEffect(worseId).summary).toMatch(/^held: the same target as step 1 \(/);
    const released = events.filter((e) => e.type === 'EffectReleased');
    expect(released).toHaveLength(1);
    expect(released[0]!.event).toMatchObject({ effectId: worseId, reason: 'the agent declared it a repeat' });
    // The release comes after step 1's commit and before step 3's only attempt.
    const at = (pred: (e: TimelineEntry) => boolean) => events.findIndex(pred);
    const step1Settled = at((e) => e.effectId === step1Id && e.type === 'ReconciliationChecked' && e.event.verdict === 'committed');
    expect(step1Settled).toBeGreaterThan(-1);
    expect(at((e) => e.type === 'EffectReleased')).toBeGreaterThan(step1Settled);
    expect(at((e) => e.effectId === worseId && e.type === 'AttemptStarted')).toBeGreaterThan(at((e) => e.type === 'EffectReleased'));
  });

  it('over MCP (tools/call with the official client, identity in _meta): the copied reading is held, then "already done", and the provider holds 1 charge', async () => {
    const token = gw.agent.authorization!.slice('Bearer '.length);
    const client = new Client({ name: 'issue-32-harness', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const workflowId = 'wf-issue32-mcp';
      const invoiceId = 'INV-3202';
      const call = (step: number, amount: unknown) => client.callTool({ name: 'payments_charge', arguments: { invoiceId, amount }, _meta: { 'dev.effectd/workflowId': workflowId, 'dev.effectd/step': step, 'dev.effectd/waitMs': 0 } });
      const textOf = (result: Awaited<ReturnType<typeof call>>) => (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
      const postsBefore = await posts();

      await holdNextCharge();
      const step1 = await call(1, 4900);
      expect(step1.isError).toBe(false);
      expect(step1.structuredContent).toMatchObject({ status: 'unknown', state: 'unknown' });
      const step1Id = (step1.structuredContent as { effectId: string }).effectId;

      // The new step with bare digits: refused (a refusal, never an outcome), step 1's fact first.
      const tried = ['4900'];
      let result = await call(2, '4900');
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(`payments.charge for invoice ${invoiceId} from step 1 may have happened and is being checked.`);
      expect(textOf(result)).toContain('4,900.00 USD');
      expect(textOf(result)).not.toMatch(/\bwrite\b/i);
      for (let turn = 0; result.isError && turn < 4; turn++) {
        const spelling = nextSpelling(textOf(result), tried);
        expect(spelling, textOf(result)).toBeDefined();
        tried.push(spelling!);
        result = await call(2, spelling);
      }
      expect(tried).toEqual(['4900', '49.00 USD']);
      // Held: unknown, never isError (an error invites a retry).
      expect(result.isError).toBe(false);
      expect(result.structuredContent).toMatchObject({ status: 'unknown', state: 'held', reference: step1Id });
      expect(textOf(result)).toMatch(/^being checked: .*nothing was sent for step 2\. Do not start another payments\.charge for invoice INV-3202\.$/);

      await providerReleases();
      await committed(step1Id);
      const truth = await charges(invoiceId);
      expect(truth).toHaveLength(1);
      // The held step re-issued (new JSON-RPC ids): already done, nothing sent.
      for (let i = 0; i < 2; i++) {
        const again = await call(2, '49.00 USD');
        expect(again.isError).toBe(false);
        expect(again.structuredContent).toMatchObject({ status: 'done', state: 'held', receipt: truth[0]!.id });
        expect(textOf(again)).toMatch(new RegExp(`^already done: payments\\.charge for invoice ${invoiceId} happened in step 1 \\(receipt ${truth[0]!.id}\\); nothing was sent for step 2\\.`));
      }
      expect((await charges(invoiceId)).map((c) => c.amount)).toEqual([4900]);
      expect(await posts()).toBe(postsBefore + 1);
    } finally {
      await client.close();
    }
  });
});
