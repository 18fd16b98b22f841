import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { spawnEffectdProcess, type EffectdProcess } from '../../packages/bench/src/harness/effectd-process.js';
import { authHeaders, ensureBuilt, getJson, postJson, startPayments, tempDir, waitFor, writeToolsConfig } from '../support/effectd-harness.js';
import { stdioMcpSuite } from '../support/stdio-mcp-suite.js';

/**
 * Issue 28: a desktop-style client — the official TypeScript client SDK over stdio, spawning
 * `effectd mcp` exactly as the desktop snippet of docs/mcp.md does (no identity flag: the default)
 * and sending no `_meta` at all, as Claude's desktop clients do — re-issues a call whose reply was
 * lost after the provider committed: one charge. A deliberate repeat says so in `effectd_repeat`:
 * two charges, and re-sending that repeat is still two. Without it, the identical call is one
 * effect, and the answer says so (the false-dedup risk).
 */
const charges = async (sim: RunningSimulator, invoiceId: string) => ((await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; metadata: Record<string, string> }[]).filter((c) => c.metadata.invoice_id === invoiceId);
const sc = (r: { structuredContent?: unknown }) => r.structuredContent as { status?: string; receipt?: string; effectId?: string; replayed?: boolean; identity?: { source: string; risk?: string } };

describe('effectd mcp (embedded stdio, the default identity): a client that sends no _meta', () => {
  // answerBudgetMs 0: the lost provider reply reaches the client as `unknown`, which it re-issues.
  const suite = stdioMcpSuite('desktop-style-client', [], { answerBudgetMs: 0 });

  it('tools/list offers effectd_repeat on each contract tool, described for a deliberate repeat only', async () => {
    const { tools } = await suite.client.listTools();
    const charge = tools.find((t) => t.name === 'payments_charge')!;
    const repeat = (charge.inputSchema.properties as Record<string, { description: string }>).effectd_repeat!;
    expect(repeat.description).toMatch(/Leave this out, except to do the very same call again ON PURPOSE/);
    expect(repeat.description).toMatch(/Never set it when sending again a call whose answer you did not get/);
    expect(charge.inputSchema.required).not.toContain('effectd_repeat');
    // The server's instructions say it too, for clients that show them to the model.
    expect(suite.client.getInstructions()).toMatch(/sending the same call again .* is the same effect.*effectd_repeat/);
  });

  it('a lost reply after the provider committed, re-issued with no _meta → one charge, the re-issue gets its receipt', async () => {
    await postJson(`${suite.payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const call = () => suite.client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-NOID-1', amount: '49.00 USD' } });
    const first = await call();
    await postJson(`${suite.payments.url}/_admin/faults`, { rules: [] });
    expect(first.isError).toBe(false);
    expect(sc(first)).toMatchObject({ status: 'unknown', identity: { source: 'content' } });
    // The provider holds the charge although the client has no receipt: the reply was lost after the commit.
    expect(await charges(suite.payments, 'INV-NOID-1')).toHaveLength(1);
    const settled = await waitFor('the re-issued call to settle', async () => {
      const again = await call();
      expect(again.isError).toBe(false);
      return sc(again).status === 'done' ? again : undefined;
    }, 15_000, 200);
    const truth = await charges(suite.payments, 'INV-NOID-1');
    expect(truth).toHaveLength(1);
    expect(sc(settled)).toMatchObject({ receipt: truth[0]!.id, effectId: sc(first).effectId });
  });

  it('a deliberate repeat names its reason in effectd_repeat: a second charge; the repeat re-sent after a lost reply is still the second', async () => {
    const args = { invoiceId: 'INV-NOID-2', amount: 4900 };
    const first = await suite.client.callTool({ name: 'payments_charge', arguments: args });
    expect(sc(first)).toMatchObject({ status: 'done', replayed: false });
    // Undeclared, the identical call is the same effect (the stated false-dedup risk): no second charge.
    const undeclared = await suite.client.callTool({ name: 'payments_charge', arguments: args });
    expect(sc(undeclared)).toMatchObject({ status: 'done', replayed: true, receipt: sc(first).receipt, identity: { source: 'content', risk: expect.stringContaining('effectd_repeat') } });
    expect(await charges(suite.payments, 'INV-NOID-2')).toHaveLength(1);

    await postJson(`${suite.payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const repeat = () => suite.client.callTool({ name: 'payments_charge', arguments: { ...args, effectd_repeat: 'the user asked for a second charge of INV-NOID-2' } });
    const second = await repeat();
    await postJson(`${suite.payments.url}/_admin/faults`, { rules: [] });
    expect(second.isError).toBe(false);
    expect(sc(second).status).toBe('unknown');
    const settled = await waitFor('the re-sent repeat to settle', async () => {
      const again = await repeat();
      return sc(again).status === 'done' ? again : undefined;
    }, 15_000, 200);
    const truth = await charges(suite.payments, 'INV-NOID-2');
    expect(truth).toHaveLength(2);
    expect(sc(settled).receipt).not.toBe(sc(first).receipt);
    expect(truth.map((c) => c.id)).toContain(sc(settled).receipt);
  });

  it('a malformed effectd_repeat is refused naming the argument, and nothing is charged', async () => {
    const result = await suite.client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-NOID-3', amount: 4900, effectd_repeat: '' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'invalid_command', fields: [{ path: 'args.effectd_repeat' }] });
    expect(await charges(suite.payments, 'INV-NOID-3')).toHaveLength(0);
  });
});

describe('effectd mcp --mcp-identity-window-ms 3000: the window slides', () => {
  const suite = stdioMcpSuite('desktop-style-client', ['--mcp-identity-window-ms', '3000']);

  it('the identical call in the next window is the same effect (a fixed window would charge again); two windows on it is another', async () => {
    const call = () => suite.client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-NOID-SLIDE', amount: 700 } });
    const first = await call();
    expect(sc(first)).toMatchObject({ status: 'done', replayed: false });
    const firstWorkflow = (first.structuredContent as { identity: { workflowId: string } }).identity.workflowId;
    // The window the first call fell in, from its derived workflow (mcp-content-<credential>-<window start>): timed from it, not from the answer.
    const windowStart = Date.parse(/(\d{4}-\d{2}-\d{2}T[\d:.]+Z)$/.exec(firstWorkflow)![1]!);
    const until = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
    await until(windowStart + 3_000 + 100);
    const next = await call();
    expect(sc(next)).toMatchObject({ status: 'done', replayed: true, effectId: sc(first).effectId, identity: { workflowId: firstWorkflow } });
    expect(await charges(suite.payments, 'INV-NOID-SLIDE')).toHaveLength(1);
    // Two windows after the first: a new effect (the identity's horizon is one to two windows).
    await until(windowStart + 6_000 + 100);
    const later = await call();
    expect(sc(later)).toMatchObject({ status: 'done', replayed: false });
    expect(await charges(suite.payments, 'INV-NOID-SLIDE')).toHaveLength(2);
  }, 30_000);
});

describe('effectd start (/mcp, the default identity): a client that sends no _meta; off refuses', () => {
  let payments: RunningSimulator;
  const started: EffectdProcess[] = [];
  const clients: Client[] = [];

  /** `effectd start` as an operator runs it, with only these flags; an SDK client with the agent's token. */
  const door = async (flags: string[]) => {
    const dataDir = tempDir();
    const config = writeToolsConfig(dataDir, { payments: payments.url }, { 'payments.charge': { settleWindowMs: 5_000, answerBudgetMs: 0 } });
    const effectd = await spawnEffectdProcess(['--data-dir', dataDir, '--config', config, '--port', '0', ...flags]);
    started.push(effectd);
    const client = new Client({ name: 'remote-connector-style-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${effectd.url}/mcp`), { requestInit: { headers: authHeaders(dataDir, 'agent') } }));
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    await ensureBuilt();
    payments = await startPayments();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(started.map((e) => e.stop()));
    await payments?.close();
  });

  it('default: a lost reply re-issued with no _meta is one charge', async () => {
    const client = await door([]);
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const call = () => client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-NOID-HTTP', amount: '12.00 USD' } });
    const first = await call();
    await postJson(`${payments.url}/_admin/faults`, { rules: [] });
    expect(sc(first)).toMatchObject({ status: 'unknown', identity: { source: 'content' } });
    const settled = await waitFor('the re-issued call to settle', async () => {
      const again = await call();
      return sc(again).status === 'done' ? again : undefined;
    }, 15_000, 200);
    const truth = await charges(payments, 'INV-NOID-HTTP');
    expect(truth).toHaveLength(1);
    expect(sc(settled).receipt).toBe(truth[0]!.id);
  }, 60_000);

  it('--mcp-identity-fallback off: refused, told what to send, nothing charged; no effectd_repeat offered', async () => {
    const client = await door(['--mcp-identity-fallback', 'off']);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'payments_charge')!.inputSchema.properties).not.toHaveProperty('effectd_repeat');
    const refused = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-NOID-OFF', amount: 4900 } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: 'invalid_command', missingIdentity: ['dev.effectd/workflowId', 'dev.effectd/step'] });
    expect(await charges(payments, 'INV-NOID-OFF')).toHaveLength(0);
  }, 60_000);
});
