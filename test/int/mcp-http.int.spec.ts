import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, startPayments, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

/** The official MCP TypeScript client SDK, against effectd's /mcp, with a bearer token. */
async function connect(url: string, token: string | undefined, era: 'legacy' | 'modern' = 'legacy'): Promise<Client> {
  const client = new Client({ name: 'effectd-test-harness', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

const identity = (workflowId: string, step: string | number, extra: Record<string, unknown> = {}) => ({ 'dev.effectd/workflowId': workflowId, 'dev.effectd/step': step, ...extra });
const charges = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; amount: number; metadata: Record<string, string> }[];

describe('MCP over Streamable HTTP, with the official TypeScript client SDK', () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;
  const token = { agent: `efd_agent_${randomBytes(24).toString('base64url')}`, other: `efd_other_${randomBytes(24).toString('base64url')}`, operator: `efd_operator_${randomBytes(24).toString('base64url')}` };
  const clients: Client[] = [];
  const open = async (t: string | undefined, era: 'legacy' | 'modern' = 'legacy') => {
    const client = await connect(effectd.url, t, era);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    payments = await startPayments();
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'credentials.json'), JSON.stringify({ credentials: [
      { token: token.agent, role: 'agent', tenant: 'default', name: 'mcp-agent' },
      { token: token.other, role: 'agent', tenant: 'acme', name: 'acme-agent' },
      { token: token.operator, role: 'operator', tenant: '*', name: 'ops' },
    ] }), { mode: 0o600 });
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url }, { 'payments.charge': { settleWindowMs: 5_000 } }) });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await effectd?.close();
    await payments?.close();
  });

  it('lists every contract, saga and read tool with names, schemas and annotations from the contracts', async () => {
    const client = await open(token.agent);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const t of effectd.runtime.tools.list()) expect(byName.has(t.name.replaceAll('.', '_')), t.name).toBe(true);
    for (const name of effectd.runtime.sagas.names()) expect(byName.has(`saga_${name}`), name).toBe(true);
    for (const t of tools) expect(t.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);

    const charge = byName.get('payments_charge')!;
    expect(charge.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(charge.inputSchema).toMatchObject({ type: 'object', additionalProperties: false, required: expect.arrayContaining(['invoiceId', 'amount']) });
    expect(Object.keys(charge.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['invoiceId', 'amount', 'currency']));
    expect(charge.outputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['status', 'effectId', 'message']) });
    expect((charge.outputSchema!.properties as Record<string, { enum?: string[] }>).status!.enum).toEqual(['done', 'not_done', 'unknown']);

    // An irreversible tool is destructive; an idempotent one idempotent; the read tools read-only.
    expect(byName.get('payments_refund')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(byName.get('email_send')!.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.get('cloud_terminate-instance')!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    expect(byName.get('effectd_status')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    expect(byName.get('effectd_history')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('saga_trip-booking')!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
  });

  it.each(['legacy', 'modern'] as const)('a charge with _meta identity is done, and the same call again (new JSON-RPC id) is a replay (%s era)', async (era) => {
    const client = await open(token.agent, era);
    const workflowId = `wf-mcp-done-${era}`;
    const call = () => client.callTool({ name: 'payments_charge', arguments: { invoiceId: `INV-MCP-${era}`, amount: '49.00 USD' }, _meta: identity(workflowId, 1) });
    const first = await call();
    expect(first.isError).toBe(false);
    expect(first.structuredContent).toMatchObject({ status: 'done', state: 'committed', tool: 'payments.charge', replayed: false, receipt: expect.stringMatching(/^ch_/) });
    expect((first.content as { type: string; text: string }[])[0]!.text).toMatch(/^done: payments.charge for invoice INV-MCP-/);
    const again = await call();
    expect(again.structuredContent).toMatchObject({ status: 'done', replayed: true, receipt: (first.structuredContent as { receipt: string }).receipt });
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id === `INV-MCP-${era}`)).toHaveLength(1);
  });

  it('commit-then-drop: the first call is unknown (not isError), the re-issued call settles, one charge at the provider', async () => {
    const client = await open(token.agent);
    const workflowId = 'wf-mcp-drop';
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    // The re-issue path (reconcile-first) is the point here: no call waits for an inline settle.
    const call = () => client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-MCP-DROP', amount: 4900 }, _meta: identity(workflowId, 'charge', { 'dev.effectd/waitMs': 0 }) });
    const first = await call();
    await postJson(`${payments.url}/_admin/faults`, { rules: [] });
    expect(first.isError).toBe(false);
    expect(first.structuredContent).toMatchObject({ status: 'unknown', reference: expect.any(String) });
    expect((first.structuredContent as { message: string }).message).toMatch(/Do not start another payments.charge for invoice INV-MCP-DROP\./);

    // The harness re-issues the call as the spec says (a new request, a new JSON-RPC id), same _meta.
    const settled = await waitFor('the re-issued call to settle', async () => {
      const again = await call();
      expect(again.isError).toBe(false);
      return (again.structuredContent as { status: string }).status === 'done' ? again : undefined;
    }, 15_000, 200);
    const truth = (await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-MCP-DROP');
    expect(truth).toHaveLength(1);
    expect(settled.structuredContent).toMatchObject({ status: 'done', receipt: truth[0]!.id, effectId: (first.structuredContent as { effectId: string }).effectId });

    // The read tools tell the same facts from the ledger.
    const status = await client.callTool({ name: 'effectd_status', arguments: { reference: (first.structuredContent as { reference: string }).reference } });
    expect(status.isError).toBe(false);
    expect(status.structuredContent).toMatchObject({ status: 'done', receipt: truth[0]!.id, workflowId, step: 'charge' });
    const history = await client.callTool({ name: 'effectd_history', arguments: {}, _meta: { 'dev.effectd/workflowId': workflowId } });
    expect(history.structuredContent).toMatchObject({ workflowId, steps: [{ step: 'charge', outcomes: [{ status: 'done', receipt: truth[0]!.id }] }] });
  });

  it('a cancelled call (the client aborts, the stream closes) does not cancel the effect: the re-issued call gets its answer, one charge', async () => {
    const client = await open(token.agent);
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'delay', ms: 800 } }] });
    const call = (signal?: AbortSignal) => client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-MCP-CANCEL', amount: 700 }, _meta: identity('wf-mcp-cancel', 1) }, signal ? { signal } : undefined);
    const aborted = new AbortController();
    const first = call(aborted.signal);
    setTimeout(() => aborted.abort(), 200);
    await expect(first).rejects.toThrow();
    await postJson(`${payments.url}/_admin/faults`, { rules: [] });
    const settled = await waitFor('the effect to be answered', async () => {
      const again = await call();
      expect(again.isError).toBe(false);
      return (again.structuredContent as { status: string }).status === 'done' ? again : undefined;
    }, 15_000, 200);
    const truth = (await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-MCP-CANCEL');
    expect(truth).toHaveLength(1);
    expect(settled.structuredContent).toMatchObject({ receipt: truth[0]!.id });
  });

  it('a mutating call without identity is a tool error that says what the harness must send, and nothing is sent', async () => {
    const client = await open(token.agent);
    const before = (await charges(payments)).length;
    const result = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-MCP-NOID', amount: 4900 } });
    expect(result.isError).toBe(true);
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text).toContain('_meta["dev.effectd/workflowId"] and _meta["dev.effectd/step"]');
    expect(text).toContain('params._meta of tools/call');
    expect(result.structuredContent).toMatchObject({ error: 'invalid_command', action: 'invalid_input', missingIdentity: ['dev.effectd/workflowId', 'dev.effectd/step'] });
    // A step alone is not enough either.
    const half = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-MCP-NOID', amount: 4900 }, _meta: { 'dev.effectd/step': 1 } });
    expect(half.structuredContent).toMatchObject({ missingIdentity: ['dev.effectd/workflowId'] });
    expect((await charges(payments)).length).toBe(before);
  });

  it('bad arguments are a tool error naming each field', async () => {
    const client = await open(token.agent);
    const result = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-MCP-BAD', amount: 'lots' }, _meta: identity('wf-mcp-bad', 1) });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'invalid_command', fields: [expect.objectContaining({ path: 'args.amount' })] });
  });

  it('another tenant: naming it in _meta is forbidden, and so is reading its effects', async () => {
    const client = await open(token.agent);
    const result = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-MCP-ACME', amount: 4900 }, _meta: identity('wf-acme', 1, { 'dev.effectd/tenant': 'acme' }) });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'forbidden', action: 'forbidden' });
    expect((result.content as { text: string }[])[0]!.text).toMatch(/^forbidden, nothing was done: mcp-agent may only act for tenant default, not acme/);

    const mine = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-MCP-MINE', amount: 4900 }, _meta: identity('wf-mine', 1) });
    const acme = await open(token.other);
    const peek = await acme.callTool({ name: 'effectd_status', arguments: { reference: (mine.structuredContent as { effectId: string }).effectId } });
    expect(peek.isError).toBe(true);
    // Answered as an effect that does not exist: no answer tells another tenant the id exists.
    expect(peek.structuredContent).toMatchObject({ error: 'not_found' });
    // The same workflowId under acme's own tenant is acme's workflow, not default's.
    const history = await acme.callTool({ name: 'effectd_history', arguments: { workflowId: 'wf-mine' } });
    expect(history.structuredContent).toMatchObject({ steps: [] });
  });

  it('no token, or an unknown one, is HTTP 401 before any JSON-RPC message is read', async () => {
    await expect(connect(effectd.url, undefined)).rejects.toThrow(/401|nauthorized/);
    await expect(connect(effectd.url, 'efd_agent_not-a-real-token-0000000000')).rejects.toThrow(/401|nauthorized/);
    const raw = await fetch(`${effectd.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('a Host header that is not loopback is refused (DNS rebinding), /v1 is untouched', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${effectd.url}/mcp`, { method: 'POST', headers: { host: 'evil.example:80', authorization: `Bearer ${token.agent}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => { res.resume(); resolve(res.statusCode!); });
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    });
    expect(status).toBe(403);
    const v1 = await postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-v1', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-V1', amount: 100 } }, { authorization: `Bearer ${token.agent}` });
    expect(v1.status).toBe(200);
  });
});
