import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { decodeOutcome } from '../../src/transport/wire/outcome-decoder.js';
import { getJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';
import { bearer, freshPostgresSchema, readTopic, runId, startKafkaFixture, testKafka, type KafkaFixture } from '../support/kafka-harness.js';

/**
 * Inline settle on the real payments simulator (Stripe v1 idempotency, search that lags writes)
 * over real HTTP: after a lost reply, the first answer waits within its budget while effectd
 * settles the effect with the provider, and is `done` with the provider's receipt (or a proven
 * `not_done`) when the truth comes in time; the provider holds exactly one charge.
 */
interface LoggedRequest { method: string; path: string; idempotencyKey: string | null; status: number | string; replayed: boolean }
const posts = async (sim: RunningSimulator, prefix: string) => ((await getJson(`${sim.url}/_admin/requests`)).body as { requests: LoggedRequest[] }).requests.filter((r) => r.method === 'POST' && r.path.startsWith(prefix));
const oracle = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body;
const arm = (sim: RunningSimulator, action: Record<string, unknown>, pathPrefix = '/v1/charges') =>
  fetch(`${sim.url}/_admin/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules: [{ match: { method: 'POST', pathPrefix, nth: 1 }, action }] }) });

let n = 0;
const charge = () => ({ workflowId: `wf-settle-${process.pid}-${++n}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-S${n}`, amount: 1500 } });

/** POST /v1/effects with the response's headers, and how long the answer took. */
async function submit(effectd: InProcessEffectd, body: unknown, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await fetch(`${effectd.url}/v1/effects`, { method: 'POST', headers: { 'content-type': 'application/json', ...effectd.agent, ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() as Record<string, any>, applied: res.headers.get('preference-applied'), tookMs: performance.now() - started };
}

async function timeline(effectd: InProcessEffectd, workflowId: string) {
  return (await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.agent)).body.timeline as { type: string; event: Record<string, any> }[];
}

describe('inline settle: the first answer after a lost reply', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  async function setup(simOptions: Record<string, unknown>, overrides: Record<string, Record<string, unknown>> = {}, env: Record<string, string> = {}) {
    const payments = await startSimulator('payments', { options: simOptions });
    const weak = await startSimulator('weak');
    const dataDir = tempDir();
    const effectd = await startEffectd({ dataDir, env, configFile: writeToolsConfig(dataDir, { payments: payments.url, weak: weak.url }, overrides) });
    open.push(payments, weak, effectd);
    return { payments, weak, effectd };
  }

  /** The first answer is done, with the one charge's receipt, and the ledger recorded every check. */
  async function doneOnce(payments: RunningSimulator, effectd: InProcessEffectd, answer: Awaited<ReturnType<typeof submit>>, workflowId: string) {
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'done', state: 'committed' });
    expect(answer.body.waitedMs).toBeGreaterThanOrEqual(0);
    const truth = (await oracle(payments)).charges;
    expect(truth).toHaveLength(1);
    expect(answer.body.receipt).toBe(truth[0].id);
    const events = await timeline(effectd, workflowId);
    expect(events.some((e) => e.type === 'ReconciliationChecked')).toBe(true);
    return events;
  }

  it('commit-then-drop: the charge committed and its reply was lost → done on the first call, one charge', async () => {
    const { payments, effectd } = await setup({});
    await arm(payments, { type: 'drop-after-mutation' });
    const cmd = charge();
    const answer = await submit(effectd, cmd);
    const events = await doneOnce(payments, effectd, answer, cmd.workflowId);
    // The lookup came first (search lags: nothing yet), then one same-key resend, which the provider replayed.
    const sent = await posts(payments, '/v1/charges');
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({ idempotencyKey: sent[0]!.idempotencyKey, replayed: true });
    expect(events.filter((e) => e.type === 'ReconciliationChecked').every((e) => e.event.verdict === 'pending')).toBe(true);
    expect(answer.applied).toBeNull(); // no Prefer header: the tool's default budget, nothing to say it applied
  });

  it('commit-then-500: the stored 500 poisons the key, and the lookups within the budget still find the charge → done', async () => {
    const { payments, effectd } = await setup({ searchLagMs: 300 });
    await arm(payments, { type: 'status', status: 500, afterCommit: true });
    const cmd = charge();
    const answer = await submit(effectd, cmd);
    const events = await doneOnce(payments, effectd, answer, cmd.workflowId);
    const sent = await posts(payments, '/v1/charges');
    expect(sent).toHaveLength(2); // the one resend met the stored 500; nothing is sent under a poisoned key again
    expect(sent[1]).toMatchObject({ status: 500, replayed: true });
    expect(events.filter((e) => e.type === 'ReconciliationChecked').at(-1)!.event).toMatchObject({ verdict: 'committed', receipt: answer.body.receipt });
  });

  it('a 429 (refused before execution): the same-key resend inside the budget charges once → done', async () => {
    const { payments, effectd } = await setup({});
    await arm(payments, { type: 'status', status: 429 });
    const cmd = charge();
    const answer = await submit(effectd, cmd);
    await doneOnce(payments, effectd, answer, cmd.workflowId);
    expect((await posts(payments, '/v1/charges')).map((r) => r.status)).toEqual([429, 200]);
  });

  it('a dropped request (the provider never acted on it) → the resend charges once → done', async () => {
    const { payments, effectd } = await setup({});
    await arm(payments, { type: 'drop-before-mutation' });
    const cmd = charge();
    const answer = await submit(effectd, cmd);
    await doneOnce(payments, effectd, answer, cmd.workflowId);
    const sent = await posts(payments, '/v1/charges');
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({ status: 200, replayed: false });
  });

  it('a late commit after the timeout but within the budget → done; the resend met the key in flight and sent nothing twice', async () => {
    const { payments, effectd } = await setup({ searchLagMs: 0 }, { 'payments.charge': { timeoutMs: 400, settleWindowMs: 10_000 } });
    await arm(payments, { type: 'late-commit', commitAfterMs: 1_000 });
    const cmd = charge();
    const answer = await submit(effectd, cmd, { prefer: 'wait=3' });
    await doneOnce(payments, effectd, answer, cmd.workflowId);
    expect(answer.applied).toBe('wait=3');
    const sent = await posts(payments, '/v1/charges');
    expect(sent.some((r) => r.status === 409)).toBe(true); // idempotency_key_in_use: the provider deduplicated
    expect(answer.body.waitedMs).toBeGreaterThan(300);
  });

  it('not_done when the provider proves it: a consistent lookup finds nothing once the settle window has passed', async () => {
    const { weak, effectd } = await setup({}, { 'weak.append-line': { settleWindowMs: 400 } });
    await arm(weak, { type: 'drop-before-mutation' }, '/append-line');
    const cmd = { workflowId: `wf-settle-line-${++n}`, step: 1, tool: 'weak.append-line', args: { about: 'ORD-1 shipped', line: 'ORD-1 handed to the carrier' } };
    const answer = await submit(effectd, cmd);
    expect(answer.body).toMatchObject({ status: 'not_done', state: 'failed_before_effect' });
    expect(answer.body.waitedMs).toBeGreaterThanOrEqual(300);
    expect((await oracle(weak)).lines).toHaveLength(0);
    const checks = (await timeline(effectd, cmd.workflowId)).filter((e) => e.type === 'ReconciliationChecked').map((e) => e.event.verdict);
    // Lookups that found nothing while the window was open proved nothing; the one after it did.
    expect(checks.slice(0, -1).every((v) => v === 'pending')).toBe(true);
    expect(checks.at(-1)).toBe('not_committed');
  });

  it('a delay longer than the budget → unknown on the first call (it says how long it waited), settled later by the reconciler, one charge', async () => {
    const { payments, effectd } = await setup({ searchLagMs: 0 }, { 'payments.charge': { timeoutMs: 400, settleWindowMs: 10_000 } });
    await arm(payments, { type: 'late-commit', commitAfterMs: 2_500 });
    const cmd = charge();
    const answer = await submit(effectd, cmd, { prefer: 'wait=1' });
    expect(answer.body).toMatchObject({ status: 'unknown', state: 'unknown' });
    expect(answer.body.message).toMatch(/Do not start another payments.charge for invoice INV-S/);
    expect(answer.applied).toBe('wait=1');
    // Lookups at 0, 250 and 750 ms, one last look as the budget ends; the next would come after it.
    expect(answer.body.waitedMs).toBeGreaterThanOrEqual(750);
    expect(answer.body.waitedMs).toBeLessThan(1_500);
    expect(answer.tookMs).toBeLessThan(400 + 1_000 + 700);
    const settled = await waitFor('the reconciler to settle it', async () => {
      const e = (await getJson(`${effectd.url}/v1/effects/${answer.body.effectId}`, effectd.agent)).body;
      return e.state === 'committed' ? e : undefined;
    }, 10_000, 100);
    const truth = (await oracle(payments)).charges;
    expect(truth).toHaveLength(1);
    expect(settled.receipt).toBe(truth[0].id);
  });

  it('Prefer: wait=0 is today\'s behaviour: unknown at once, no waiting, and the background reconciler settles it', async () => {
    const { payments, effectd } = await setup({ searchLagMs: 200 });
    await arm(payments, { type: 'drop-after-mutation' });
    const cmd = charge();
    const answer = await submit(effectd, cmd, { prefer: 'wait=0' });
    expect(answer.body).toMatchObject({ status: 'unknown', state: 'unknown' });
    expect(answer.body.waitedMs).toBeUndefined();
    expect(answer.applied).toBe('wait=0');
    expect(await posts(payments, '/v1/charges')).toHaveLength(1); // no resend inside the answer
    await waitFor('the reconciler to settle it', async () => {
      const e = (await getJson(`${effectd.url}/v1/effects/${answer.body.effectId}`, effectd.agent)).body;
      return e.state === 'committed' ? e : undefined;
    }, 10_000, 100);
    expect((await oracle(payments)).charges).toHaveLength(1);
  });

  it('a live claim elsewhere is waited on, not stolen: a second submission during the dispatch gets its outcome, one request sent', async () => {
    const { payments, effectd } = await setup({});
    await arm(payments, { type: 'delay', ms: 800 });
    const cmd = charge();
    const holder = submit(effectd, cmd);
    await waitFor('the provider to receive the charge', async () => ((await posts(payments, '/v1/charges')).length === 1 ? true : undefined), 5_000, 10);
    const during = await submit(effectd, cmd);
    expect(during.status).toBe(200);
    expect(during.body).toMatchObject({ status: 'done', state: 'committed' });
    expect(during.body.waitedMs).toBeGreaterThan(300);
    expect((await holder).body).toMatchObject({ status: 'done', receipt: during.body.receipt });
    expect(await posts(payments, '/v1/charges')).toHaveLength(1);
    expect((await oracle(payments)).charges).toHaveLength(1);
  });

  it('the no-fault path never waits, and an unparseable Prefer is ignored (RFC 7240), not refused', async () => {
    const { payments, effectd } = await setup({});
    const plain = await submit(effectd, charge(), { prefer: 'wait=soon, respond-async' });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ status: 'done' });
    expect(plain.body.waitedMs).toBeUndefined();
    expect(plain.applied).toBeNull();
    expect((await oracle(payments)).charges).toHaveLength(1);
  });

  it('a caller asks for more than the cap: the cap applies, and Preference-Applied says so', async () => {
    const { payments, effectd } = await setup({ searchLagMs: 0 }, { 'payments.charge': { timeoutMs: 400, settleWindowMs: 10_000 } }, { EFFECTD_ANSWER_BUDGET_MAX_MS: '1000' });
    await arm(payments, { type: 'late-commit', commitAfterMs: 2_500 });
    const answer = await submit(effectd, charge(), { prefer: 'wait=30' });
    expect(answer.applied).toBe('wait=1');
    expect(answer.body.status).toBe('unknown');
    expect(answer.body.waitedMs).toBeLessThan(1_500);
  });
});

describe('inline settle over MCP (official client SDK, Streamable HTTP): _meta["dev.effectd/waitMs"]', () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;
  let client: Client;
  beforeAll(async () => {
    payments = await startSimulator('payments', { options: { searchLagMs: 200 } });
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url }) });
    client = new Client({ name: 'effectd-inline-settle-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${effectd.url}/mcp`), { requestInit: { headers: effectd.agent } }));
  });
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await effectd?.close();
    await payments?.close();
  });
  const call = (invoiceId: string, meta: Record<string, unknown>) =>
    client.callTool({ name: 'payments_charge', arguments: { invoiceId, amount: 700 }, _meta: { 'dev.effectd/workflowId': `wf-mcp-settle-${invoiceId}`, 'dev.effectd/step': 1, ...meta } });

  it('a lost reply is done on the first call, with how long it waited; waitMs 0 answers unknown at once (never isError)', async () => {
    await arm(payments, { type: 'drop-after-mutation' });
    const done = await call(`INV-M${process.pid}-1`, {});
    expect(done.isError).toBe(false);
    expect(done.structuredContent).toMatchObject({ status: 'done', state: 'committed' });
    expect((done.structuredContent as { waitedMs: number }).waitedMs).toBeGreaterThanOrEqual(0);

    await arm(payments, { type: 'drop-after-mutation' });
    const now = await call(`INV-M${process.pid}-2`, { 'dev.effectd/waitMs': 0 });
    expect(now.isError).toBe(false);
    expect(now.structuredContent).toMatchObject({ status: 'unknown', state: 'unknown' });
    expect((now.structuredContent as { waitedMs?: number }).waitedMs).toBeUndefined();
    const truth = (await oracle(payments)).charges as { id: string; metadata: Record<string, string> }[];
    expect(truth.filter((c) => c.metadata.invoice_id === `INV-M${process.pid}-1`).map((c) => c.id)).toEqual([(done.structuredContent as { receipt: string }).receipt]);
  });

  it('a waitMs that is not a whole number of ms is refused by name, and nothing is sent', async () => {
    const before = (await posts(payments, '/v1/charges')).length;
    const refused = await call(`INV-M${process.pid}-3`, { 'dev.effectd/waitMs': 'soon' });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/dev\.effectd\/waitMs.*whole number of milliseconds/);
    expect((await posts(payments, '/v1/charges')).length).toBe(before);
  });
});

describe('inline settle over Kafka (real broker, PostgreSQL ledger): the command\'s waitMs', () => {
  const run = runId('settle');
  const schema = freshPostgresSchema(run);
  let payments: RunningSimulator;
  let fixture: KafkaFixture;
  beforeAll(async () => {
    payments = await startSimulator('payments', { options: { searchLagMs: 200 } });
    fixture = await startKafkaFixture(run, schema.url, { providerUrls: { payments: payments.url } });
  });
  afterAll(async () => {
    await fixture?.close();
    await payments?.close();
    await schema.drop();
  });

  it('the outcome of a lost reply is done on first publication with waitedMs; waitMs 0 publishes unknown at once', async () => {
    const command = (i: number, extra: Record<string, unknown> = {}) => JSON.stringify({ workflowId: `wf-${run}-${i}`, step: '1', tool: 'payments.charge', args: { invoiceId: `INV-${run}-${i}`, amount: 900 }, correlationId: `corr-${run}-${i}`, ...extra });
    const producer = testKafka().producer();
    await producer.connect();
    try {
      await arm(payments, { type: 'drop-after-mutation' });
      await producer.send({ topic: fixture.topics.commands, acks: -1, messages: [{ key: `wf-${run}-1`, value: command(1), headers: bearer(fixture.token) }] });
      const first = await readTopic(fixture.topics.outcomes, (records) => records.length >= 1, 20_000);
      const settled = decodeOutcome(first[0]!.message.value!.toString('utf8'));
      expect(settled).toMatchObject({ correlationId: `corr-${run}-1`, state: 'committed' });
      expect(settled.waitedMs).toBeGreaterThanOrEqual(0);
      const truth = (await oracle(payments)).charges as { id: string }[];
      expect(truth.map((c) => c.id)).toEqual([settled.receipt]);

      await arm(payments, { type: 'drop-after-mutation' });
      await producer.send({ topic: fixture.topics.commands, acks: -1, messages: [{ key: `wf-${run}-2`, value: command(2, { waitMs: 0 }), headers: bearer(fixture.token) }] });
      const both = await readTopic(fixture.topics.outcomes, (records) => records.length >= 2, 20_000);
      const atOnce = decodeOutcome(both.find((r) => decodeOutcome(r.message.value!.toString('utf8')).correlationId === `corr-${run}-2`)!.message.value!.toString('utf8'));
      expect(atOnce).toMatchObject({ state: 'unknown' });
      expect(atOnce.waitedMs).toBeUndefined();
    } finally {
      await producer.disconnect();
    }
  });
});
