import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome, type RawClientDispatch, type TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, suiteEffectd, type InProcessEffectd } from '../support/effectd-harness.js';

/**
 * The MCP Tasks extension (io.modelcontextprotocol/tasks, 2026-07-28) with the official TypeScript
 * client and `@modelcontextprotocol/ext-tasks`: an effect still unknown when its answer budget ends
 * is answered as a task (its id the effect's), `tasks/get` reads it from the ledger until it
 * completes with the provider's receipt, a re-issued call names the same task, and `tasks/cancel`
 * on a dispatched effect is acknowledged and refused with the reason. A client that does not
 * declare the extension gets today's answers. (The Python SDK, mcp 2.3.0, has no Tasks requester:
 * docs/mcp.md, "Tasks".)
 */
const PROTOCOL = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const info = { name: 'effectd-tasks-test', version: '1.0.0' };

interface Charge { id: string; metadata: Record<string, string> }
const charges = async (url: string, invoice: string) => ((await getJson(`${url}/_oracle/state`)).body.charges as Charge[]).filter((c) => c.metadata.invoice_id === invoice);
const arm = (url: string, rules: unknown[]) => postJson(`${url}/_admin/faults`, { rules });
const identity = (workflowId: string, step: string) => ({ 'dev.effectd/workflowId': workflowId, 'dev.effectd/step': step, 'dev.effectd/waitMs': 0 });

/** The per-request envelope a 2026-07-28 request carries; `tasks`: whether it declares the extension. */
const envelope = (tasks: boolean) => ({
  'io.modelcontextprotocol/protocolVersion': PROTOCOL,
  'io.modelcontextprotocol/clientInfo': info,
  'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
});

/** One JSON-RPC request POSTed to /mcp as a 2026-07-28 client sends it (headers Mcp-Method, Mcp-Name). */
async function post(url: string, token: string, message: { method: string; params?: Record<string, unknown> }, headers: Record<string, string> = {}) {
  const name = message.method === 'tools/call' ? String(message.params?.name) : message.method.startsWith('tasks/') ? String(message.params?.taskId) : undefined;
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`,
      'mcp-protocol-version': PROTOCOL, 'mcp-method': message.method, ...(name !== undefined ? { 'mcp-name': name } : {}),
      ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: Math.floor(Math.random() * 1e9), ...message }),
  });
  const text = await res.text();
  const json = text.startsWith('{') ? JSON.parse(text) : JSON.parse(text.split('\n').filter((l) => l.startsWith('data:')).pop()!.slice(5));
  return json as { result?: Record<string, any>; error?: { code: number; message: string; data?: unknown } };
}

describe('MCP Tasks: an unknown effect is a task read from the ledger', () => {
  // The charge's reply is lost after it committed, and the provider's search lags past the answer budget (0 here).
  const suite = suiteEffectd({ payments: { searchLagMs: 4_000 } });
  const open: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const o of open) await o.close().catch(() => undefined);
  });

  const token = () => suite.effectd.agent.authorization!.replace(/^Bearer /, '');

  /** The official client pinned to 2026-07-28, with the ext-tasks session over a raw dispatch that POSTs each request. */
  async function session(): Promise<TaskEnabledSession> {
    const client = new Client(info, { versionNegotiation: { mode: { pin: PROTOCOL } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${suite.effectd.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token()}` } } }));
    const rawDispatch: RawClientDispatch = async (request, options) => {
      const answer = await post(suite.effectd.url, token(), request as { method: string; params?: Record<string, unknown> }, { ...options?.context?.headers });
      return answer.error ? { kind: 'error', error: answer.error as never } : { kind: 'result', result: answer.result as never };
    };
    const tasks = createTaskSessionFromClient(client, { endpointId: 'effectd-tasks-test', rawDispatch, v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo: info, clientCapabilities: {} } });
    open.push(tasks, client);
    return tasks;
  }

  it('commit-then-drop past the budget: a task; tasks/get completes with the receipt; a re-issue is the same task; cancel is refused; one charge', async () => {
    const { payments, effectd } = suite;
    const invoice = 'INV-TASK-1';
    const meta = identity('wf-mcp-task-1', 'charge');
    const tasks = await session();
    await arm(payments.url, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
    const exec = await tasks.callTool('payments_charge', { invoiceId: invoice, amount: 4_900 }, { metadata: meta });
    expect(exec.kind).toBe('task');
    if (exec.kind !== 'task') return;
    const taskId = exec.handle.taskId;
    expect(taskId).toMatch(/^eff_/);

    // The task is the effect: durable before the answer, readable over /v1 by the same id.
    const effect = await getJson(`${effectd.url}/v1/effects/${taskId}`, effectd.agent);
    expect(effect.status).toBe(200);
    expect(effect.body).toMatchObject({ effectId: taskId, status: 'unknown' });

    // The harness re-issues the call (a new JSON-RPC id, the same _meta): the same task. Its
    // reconcile-first resend is dropped before the provider acts, so the effect is still unknown.
    await arm(payments.url, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-before-mutation' } }]);
    const again = await post(effectd.url, token(), { method: 'tools/call', params: { name: 'payments_charge', arguments: { invoiceId: invoice, amount: 4_900 }, _meta: { ...meta, ...envelope(true) } } });
    expect(again.result).toMatchObject({ resultType: 'task', taskId, status: 'working', ttlMs: null });
    expect(again.result!.pollIntervalMs).toBeGreaterThanOrEqual(1_000);
    expect(again.result!.statusMessage).toMatch(/^unknown: payments.charge for invoice INV-TASK-1 may or may not have happened/);
    await arm(payments.url, []);

    // tasks/get while effectd checks: working, from the ledger.
    const working = await post(effectd.url, token(), { method: 'tasks/get', params: { taskId, _meta: envelope(true) } });
    expect(working.result).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(Date.parse(working.result!.createdAt)).toBeLessThanOrEqual(Date.parse(working.result!.lastUpdatedAt));

    // tasks/cancel on a dispatched effect: acknowledged (the spec's empty ack) and refused, with the reason.
    const cancel = await post(effectd.url, token(), { method: 'tasks/cancel', params: { taskId, _meta: envelope(true) } });
    expect(cancel.error).toBeUndefined();
    expect(cancel.result).toMatchObject({ resultType: 'complete', _meta: { 'dev.effectd/cancel': { honoured: false, reason: expect.stringMatching(/was sent to the provider .*the world cannot be cancelled/) } } });
    const afterCancel = await post(effectd.url, token(), { method: 'tasks/get', params: { taskId, _meta: envelope(true) } });
    expect(afterCancel.result!.status).not.toBe('cancelled');

    // The client polls tasks/get (at pollIntervalMs) until the reconciler finds the charge.
    const { outcome, lastTask } = await exec.settle();
    expect(outcome.status).toBe('completed');
    expect(lastTask).toMatchObject({ taskId, status: 'completed' });
    const result = resultFromTaskOutcome(outcome) as { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };
    const truth = await charges(payments.url, invoice);
    expect(truth).toHaveLength(1);
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ status: 'done', state: 'committed', effectId: taskId, receipt: truth[0]!.id });
    expect(result.content[0]!.text).toMatch(/^done: payments.charge for invoice INV-TASK-1 happened \(receipt ch_/);

    // The same call once more: today's done answer from the ledger, immediate; still one charge.
    const replay = await post(effectd.url, token(), { method: 'tools/call', params: { name: 'payments_charge', arguments: { invoiceId: invoice, amount: 4_900 }, _meta: { ...meta, ...envelope(true) } } });
    expect(replay.result).toMatchObject({ isError: false, structuredContent: { status: 'done', receipt: truth[0]!.id, replayed: true } });
    expect(replay.result!.resultType).not.toBe('task');
    expect(await charges(payments.url, invoice)).toHaveLength(1);
  }, 30_000);

  it('tasks/cancel on a held effect (nothing sent) is honoured: the task is cancelled, the step is not done, and only the first charge exists', async () => {
    const { payments, effectd } = suite;
    const invoice = 'INV-TASK-HELD';
    const args = { invoiceId: invoice, amount: 2_500 };
    const tasks = await session();
    await arm(payments.url, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
    const first = await tasks.callTool('payments_charge', args, { metadata: identity('wf-mcp-task-held', 'charge') });
    await arm(payments.url, []);
    expect(first.kind).toBe('task');
    // The model decides the same charge again as a new step: held behind the first (nothing sent), a task of its own.
    const second = await post(effectd.url, token(), { method: 'tools/call', params: { name: 'payments_charge', arguments: args, _meta: { ...identity('wf-mcp-task-held', 'charge-again'), ...envelope(true) } } });
    expect(second.result).toMatchObject({ resultType: 'task', status: 'working', structuredContent: { state: 'held' } });
    const heldId = second.result!.taskId as string;
    expect(heldId).not.toBe(first.kind === 'task' ? first.handle.taskId : undefined);

    const cancel = await post(effectd.url, token(), { method: 'tasks/cancel', params: { taskId: heldId, _meta: envelope(true) } });
    expect(cancel.result).toMatchObject({ resultType: 'complete', _meta: { 'dev.effectd/cancel': { honoured: true, reason: expect.stringMatching(/nothing had been sent .*withdrawn, it will never be sent/) } } });
    const cancelled = await post(effectd.url, token(), { method: 'tasks/get', params: { taskId: heldId, _meta: envelope(true) } });
    expect(cancelled.result).toMatchObject({ resultType: 'complete', taskId: heldId, status: 'cancelled' });
    // The ledger says so, and the step's identity answers not_done from then on (a new step may try again).
    const effect = await getJson(`${effectd.url}/v1/effects/${heldId}`, effectd.agent);
    expect(effect.body).toMatchObject({ status: 'not_done', state: 'failed_before_effect', attempts: 0 });
    expect((effect.body.evidence as { type: string }[]).map((e) => e.type)).toContain('EffectWithdrawn');
    const again = await post(effectd.url, token(), { method: 'tools/call', params: { name: 'payments_charge', arguments: args, _meta: { ...identity('wf-mcp-task-held', 'charge-again'), ...envelope(true) } } });
    expect(again.result).toMatchObject({ isError: true, structuredContent: { status: 'not_done', effectId: heldId } });
    // A second cancel of the cancelled task: the same ack, not honoured again (the task is over).
    const twice = await post(effectd.url, token(), { method: 'tasks/cancel', params: { taskId: heldId, _meta: envelope(true) } });
    expect(twice.result).toMatchObject({ resultType: 'complete', _meta: { 'dev.effectd/cancel': { honoured: false } } });

    const settled = first.kind === 'task' ? await first.settle() : undefined;
    expect(settled?.outcome.status).toBe('completed');
    expect(await charges(payments.url, invoice)).toHaveLength(1);
  }, 30_000);

  it('a client that does not declare the extension gets today\'s unknown answer, and tasks/* from it is -32021; an unknown task id is -32602', async () => {
    const { payments, effectd } = suite;
    const client = new Client(info, { versionNegotiation: { mode: { pin: PROTOCOL } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${effectd.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token()}` } } }));
    open.push(client);
    // effectd advertises the extension; this client does not declare it on its requests.
    expect((client.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined)?.extensions).toHaveProperty([TASKS]);

    await arm(payments.url, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
    const plain = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-TASK-PLAIN', amount: 1_200 }, _meta: identity('wf-mcp-task-plain', 'charge') });
    await arm(payments.url, []);
    expect(plain.isError).toBe(false);
    expect(plain.structuredContent).toMatchObject({ status: 'unknown', state: 'unknown', reference: expect.stringMatching(/^eff_/) });
    expect((plain as Record<string, unknown>).resultType).not.toBe('task');
    expect((plain as Record<string, unknown>).taskId).toBeUndefined();

    const effectId = (plain.structuredContent as { effectId: string }).effectId;
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const refused = await post(effectd.url, token(), { method, params: { taskId: effectId, ...(method === 'tasks/update' ? { inputResponses: {} } : {}), _meta: envelope(false) } });
      expect(refused.error, method).toMatchObject({ code: -32021 });
    }
    const unknownId = await post(effectd.url, token(), { method: 'tasks/get', params: { taskId: 'eff_0000000000000000000000000000000000000000', _meta: envelope(true) } });
    expect(unknownId.error).toMatchObject({ code: -32602 });
    // Mcp-Name must name the task (the SDK's header check covers tasks/* as it does tools/call).
    const mismatched = await post(effectd.url, token(), { method: 'tasks/get', params: { taskId: effectId, _meta: envelope(true) } }, { 'mcp-name': 'eff_other' });
    expect(mismatched.error).toMatchObject({ code: -32020 });
  });
});

describe('MCP Tasks: a saga start still unknown is a task of its own', () => {
  let payments: RunningSimulator;
  let email: RunningSimulator;
  let effectd: InProcessEffectd;
  beforeAll(async () => {
    [payments, email] = await Promise.all([startSimulator('payments', { options: { searchLagMs: 4_000 } }), startSimulator('email')]);
    effectd = await startEffectd({ providerUrls: { payments: payments.url, email: email.url } });
  });
  afterAll(async () => {
    await effectd?.close();
    await Promise.all([payments?.close(), email?.close()]);
  });

  it('its charge is dropped after it committed: the start is a task (the saga\'s workflow), tasks/get completes once the saga did, cancel is refused', async () => {
    const token = effectd.agent.authorization!.replace(/^Bearer /, '');
    const workflowId = 'wf-mcp-task-saga';
    await arm(payments.url, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
    const input = { subscriptionId: 'SUB-TASK', period: '2026-12', email: 'ana@example.com', amount: 900 };
    const start = () => post(effectd.url, token, { method: 'tools/call', params: { name: 'saga_subscription-renewal', arguments: input, _meta: { 'dev.effectd/workflowId': workflowId, ...envelope(true) } } });
    const first = await start();
    expect(first.result).toMatchObject({ resultType: 'task', status: 'working', taskId: `saga/default/${workflowId}`, structuredContent: { status: 'unknown' } });
    const taskId = first.result!.taskId as string;
    // The same start again (its step's same-key resend dropped before the provider acts) names the same task.
    await arm(payments.url, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-before-mutation' } }]);
    const again = await start();
    await arm(payments.url, []);
    expect(again.result).toMatchObject({ resultType: 'task', taskId, status: 'working' });

    const cancel = await post(effectd.url, token, { method: 'tasks/cancel', params: { taskId, _meta: envelope(true) } });
    expect(cancel.result).toMatchObject({ resultType: 'complete', _meta: { 'dev.effectd/cancel': { honoured: false } } });

    let last: Record<string, any> | undefined;
    for (const until = Date.now() + 20_000; Date.now() < until;) {
      last = (await post(effectd.url, token, { method: 'tasks/get', params: { taskId, _meta: envelope(true) } })).result;
      if (last?.status !== 'working') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(last).toMatchObject({ resultType: 'complete', taskId, status: 'completed', result: { resultType: 'complete', isError: false, structuredContent: { status: 'done', tool: 'saga:subscription-renewal' } } });
    expect(((await getJson(`${payments.url}/_oracle/state`)).body.charges as Charge[]).filter((c) => c.metadata.invoice_id === 'SUB-TASK-2026-12')).toHaveLength(1);
  }, 30_000);
});
