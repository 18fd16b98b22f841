import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import type { IdentityFallback } from '../../src/mcp/identity.js';
import { createRuntime, type EffectdRuntime } from '../../src/runtime/effectd-runtime.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, getJson, startPayments, tempDir, writeToolsConfig } from '../support/effectd-harness.js';
import { stdioMcpSuite } from '../support/stdio-mcp-suite.js';
import { loadSettings } from '../../src/config/settings-loader.js';

/**
 * The operator's fallback identity for plain MCP clients that cannot set `_meta`
 * (`--mcp-identity-fallback`), with the official TypeScript client SDK: off by default (the call is
 * refused and told what to send), `header` and `content` when the operator turns it on.
 */
const charges = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; metadata: Record<string, string> }[];
const text = (r: { content?: unknown }) => (r.content as { text: string }[])[0]!.text;

interface Instance { runtime: EffectdRuntime; server: HttpServer; token: string }

async function instance(payments: RunningSimulator, identityFallback?: IdentityFallback): Promise<Instance> {
  const dataDir = tempDir();
  const runtime = await createRuntime({ dataDir, reconcileTickMs: 50, settings: loadSettings({}), configFile: writeToolsConfig(dataDir, { payments: payments.url }, { 'payments.charge': { settleWindowMs: 5_000 } }) });
  const server = await startHttpServer(runtime, 0, '127.0.0.1', undefined, identityFallback ? { identityFallback } : {});
  runtime.startReconciler();
  return { runtime, server, token: authHeaders(dataDir, 'agent').authorization!.slice('Bearer '.length) };
}

/** A plain client: it can set HTTP headers on each request (through its fetch), not `_meta`. */
async function plainClient(at: Instance, headers: () => Record<string, string> = () => ({})): Promise<Client> {
  const client = new Client({ name: 'plain-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${at.server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${at.token}` } },
    fetch: (url, init) => {
      const merged = new Headers(init?.headers);
      for (const [k, v] of Object.entries(headers())) merged.set(k, v);
      return fetch(url, { ...init, headers: merged });
    },
  }));
  return client;
}

describe('MCP identity fallback for plain clients (official TypeScript client SDK)', () => {
  let payments: RunningSimulator;
  const instances: Instance[] = [];
  const clients: Client[] = [];
  const start = async (fallback?: IdentityFallback) => {
    const at = await instance(payments, fallback);
    instances.push(at);
    return at;
  };
  const open = async (at: Instance, headers?: () => Record<string, string>) => {
    const client = await plainClient(at, headers);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    payments = await startPayments();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const at of instances) {
      await at.server.close();
      await at.runtime.close();
    }
    await payments?.close();
  });

  it('off (the programmatic default; `effectd start` defaults to content): a call without _meta, even with the headers, is refused and told what to send; nothing is charged', async () => {
    const at = await start();
    const client = await open(at, () => ({ 'X-Effectd-Workflow-Id': 'wf-off', 'X-Effectd-Step': '1' }));
    const result = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-FB-OFF', amount: 4900 } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'invalid_command', missingIdentity: ['dev.effectd/workflowId', 'dev.effectd/step'] });
    expect(text(result)).toContain('params._meta of tools/call');
    expect(text(result)).toContain('started with --mcp-identity-fallback off');
    expect(text(result)).toMatch(/the operator can use content \(the default: .*false dedup.*\) or header/);
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-FB-OFF')).toHaveLength(0);
  });

  it('header: workflowId and step from X-Effectd-Workflow-Id / X-Effectd-Step; a re-issue is a replay; _meta still wins', async () => {
    const at = await start({ mode: 'header', workflowHeader: 'x-effectd-workflow-id', stepHeader: 'x-effectd-step' });
    let step = '1';
    const client = await open(at, () => ({ 'X-Effectd-Workflow-Id': 'wf-fb-header', 'X-Effectd-Step': step }));
    const call = (invoiceId: string) => client.callTool({ name: 'payments_charge', arguments: { invoiceId, amount: 4900 } });
    const first = await call('INV-FB-H1');
    expect(first.isError).toBe(false);
    expect(first.structuredContent).toMatchObject({ status: 'done', replayed: false, identity: { source: 'header', workflowId: 'wf-fb-header', step: '1' } });
    expect(text(first)).toContain('identity from the HTTP headers: workflow wf-fb-header, step 1');
    const again = await call('INV-FB-H1');
    expect(again.structuredContent).toMatchObject({ status: 'done', replayed: true, effectId: (first.structuredContent as { effectId: string }).effectId });
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-FB-H1')).toHaveLength(1);

    // The next step is a new effect.
    step = '2';
    const second = await call('INV-FB-H2');
    expect(second.structuredContent).toMatchObject({ status: 'done', replayed: false, identity: { step: '2' } });

    // _meta wins over the headers, field by field.
    const meta = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-FB-H3', amount: 4900 }, _meta: { 'dev.effectd/workflowId': 'wf-fb-meta', 'dev.effectd/step': 9 } });
    expect(meta.structuredContent).toMatchObject({ status: 'done' });
    expect((meta.structuredContent as { identity?: unknown }).identity).toBeUndefined();
    const status = await client.callTool({ name: 'effectd_status', arguments: { reference: (meta.structuredContent as { effectId: string }).effectId } });
    expect(status.structuredContent).toMatchObject({ workflowId: 'wf-fb-meta', step: '9' });

    // Without the headers (and without _meta) it is still refused.
    const bare = await open(at);
    const refused = await bare.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-FB-H4', amount: 4900 } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ missingIdentity: ['dev.effectd/workflowId', 'dev.effectd/step'] });
    expect(text(refused)).toContain('This effectd also takes them from the HTTP headers x-effectd-workflow-id and x-effectd-step');
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-FB-H4')).toHaveLength(0);
  });

  it('content: the workflow from the credential + window, the step from the content; an identical call is one effect (and the risk is said)', async () => {
    const at = await start({ mode: 'content', windowMs: 3_600_000 });
    const client = await open(at);
    const call = (invoiceId: string, amount: unknown = 4900) => client.callTool({ name: 'payments_charge', arguments: { invoiceId, amount } });
    const first = await call('INV-FB-C1');
    expect(first.isError).toBe(false);
    expect(first.structuredContent).toMatchObject({ status: 'done', replayed: false, identity: { source: 'content', workflowId: expect.stringMatching(/^mcp-content-/), step: expect.stringMatching(/^content-[0-9a-f]{24}$/), risk: expect.stringContaining('false dedup') } });
    expect(text(first)).toContain('false dedup');
    // A re-issue (new JSON-RPC id, same content) is absorbed — and so would be an undeclared repeat.
    const again = await call('INV-FB-C1');
    expect(again.structuredContent).toMatchObject({ status: 'done', replayed: true, effectId: (first.structuredContent as { effectId: string }).effectId });
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-FB-C1')).toHaveLength(1);
    // Other content is another effect.
    const other = await call('INV-FB-C2');
    expect(other.structuredContent).toMatchObject({ status: 'done', replayed: false });
    expect((other.structuredContent as { effectId: string }).effectId).not.toBe((first.structuredContent as { effectId: string }).effectId);
    // The same content written another way is a different step, and the content index holds it: still one charge.
    const rewritten = await call('INV-FB-C1', '49.00 USD');
    expect(rewritten.isError).toBe(false);
    expect(rewritten.structuredContent).toMatchObject({ status: 'done', state: 'held', receipt: (first.structuredContent as { receipt: string }).receipt });
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-FB-C1')).toHaveLength(1);
  });
});

describe('effectd mcp (stdio, embedded) --mcp-identity-fallback content', () => {
  const suite = stdioMcpSuite('plain-stdio-client', ['--mcp-identity-fallback', 'content']);

  it('a call without _meta gets its identity from the content: the identical call again is one effect', async () => {
    const call = () => suite.client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-FB-STDIO', amount: 300 } });
    const first = await call();
    expect(first.structuredContent).toMatchObject({ status: 'done', replayed: false, identity: { source: 'content' } });
    const again = await call();
    expect(again.structuredContent).toMatchObject({ status: 'done', replayed: true });
    expect((await charges(suite.payments)).filter((c) => c.metadata.invoice_id === 'INV-FB-STDIO')).toHaveLength(1);
  });
});
