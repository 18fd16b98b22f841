import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { ensureBuilt, getJson, postJson, startEffectd, startPayments, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

const charges = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; metadata: Record<string, string> }[];

/**
 * `effectd mcp --url …/mcp --token …`: the official SDK's stdio client spawns the CLI, which
 * forwards tools/list and tools/call to an effectd running in this process, `_meta` unchanged.
 */
describe('effectd mcp --url: stdio forwarding to a running effectd, with the official TypeScript client SDK', () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;
  let client: Client;
  let stderr = '';
  let token = '';

  beforeAll(async () => {
    await ensureBuilt();
    payments = await startPayments();
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url }, { 'payments.charge': { settleWindowMs: 5_000 } }) });
    token = effectd.agent.authorization!.slice('Bearer '.length);
    const env = { ...process.env, EFFECTD_TOKEN: token } as Record<string, string>;
    const transport = new StdioClientTransport({ command: process.execPath, args: ['bin/effectd.js', 'mcp', '--url', `${effectd.url}/mcp`], env, stderr: 'pipe' });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'effectd-stdio-forward-test', version: '1.0.0' });
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await effectd?.close();
    await payments?.close();
  });

  it('tools/list is the running effectd\'s list, with its schemas and annotations', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const t of effectd.runtime.tools.list()) expect(byName.has(t.name.replaceAll('.', '_')), t.name).toBe(true);
    expect(byName.get('payments_refund')?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(byName.get('effectd_status')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('payments_charge')?.outputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['status', 'effectId']) });
    expect(stderr).toContain(`forwarding to ${effectd.url}/mcp`);
  });

  it('commit-then-drop through the forwarder: unknown (not isError), the re-issued call settles, one charge, in the running effectd\'s ledger', async () => {
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    // The re-issue path (reconcile-first) is the point here: no call waits for an inline settle.
    const call = () => client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-FWD-1', amount: '12.00 USD' }, _meta: { 'dev.effectd/workflowId': 'wf-fwd', 'dev.effectd/step': 'charge', 'dev.effectd/waitMs': 0 } });
    const first = await call();
    await postJson(`${payments.url}/_admin/faults`, { rules: [] });
    expect(first.isError).toBe(false);
    expect(first.structuredContent).toMatchObject({ status: 'unknown', reference: expect.any(String) });
    const settled = await waitFor('the re-issued call to settle', async () => {
      const again = await call();
      expect(again.isError).toBe(false);
      return (again.structuredContent as { status: string }).status === 'done' ? again : undefined;
    }, 15_000, 200);
    const truth = (await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-FWD-1');
    expect(truth).toHaveLength(1);
    expect(settled.structuredContent).toMatchObject({ receipt: truth[0]!.id, effectId: (first.structuredContent as { effectId: string }).effectId });
    // The effect is the running effectd's (its ledger, its workflow and step from the forwarded _meta).
    const view = await getJson(`${effectd.url}/v1/workflows/wf-fwd`, effectd.agent);
    expect(view.status).toBe(200);
    expect(JSON.stringify(view.body)).toContain(truth[0]!.id);
  });

  it('_meta passes unchanged: another tenant is forbidden, no identity is the tool error, history reads the workflow', async () => {
    const acme = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-FWD-ACME', amount: 100 }, _meta: { 'dev.effectd/workflowId': 'wf-fwd-acme', 'dev.effectd/step': 1, 'dev.effectd/tenant': 'acme' } });
    expect(acme.isError).toBe(true);
    expect(acme.structuredContent).toMatchObject({ error: 'forbidden' });
    const noId = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-FWD-NOID', amount: 100 } });
    expect(noId.isError).toBe(true);
    expect(noId.structuredContent).toMatchObject({ missingIdentity: ['dev.effectd/workflowId', 'dev.effectd/step'] });
    const history = await client.callTool({ name: 'effectd_history', arguments: {}, _meta: { 'dev.effectd/workflowId': 'wf-fwd' } });
    expect(history.structuredContent).toMatchObject({ workflowId: 'wf-fwd', steps: [{ step: 'charge', outcomes: [{ status: 'done' }] }] });
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id.startsWith('INV-FWD-') && c.metadata.invoice_id !== 'INV-FWD-1')).toHaveLength(0);
  });

  it('a wrong token fails at start with the reason, before serving anything', async () => {
    // Asynchronously: the effectd that answers the 401 runs in this process.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['bin/effectd.js', 'mcp', '--url', `${effectd.url}/mcp`, '--token', 'efd_agent_not-a-real-token-0000000000'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('error', reject);
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout: out, stderr: err });
      });
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/could not connect to the effectd MCP endpoint .*\/mcp: .*(401|nauthorized)/);
    expect(run.stdout).toBe('');
  });
});
