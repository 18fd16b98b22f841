import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { ensureBuilt, getJson, postJson, startPayments, tempDir, waitFor, writeToolsConfig } from '../support/effectd-harness.js';

const charges = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; metadata: Record<string, string> }[];

describe('effectd mcp: stdio, with the official TypeScript client SDK spawning the CLI', () => {
  let payments: RunningSimulator;
  let client: Client;
  let stderr = '';

  beforeAll(async () => {
    await ensureBuilt();
    payments = await startPayments();
    const dataDir = tempDir();
    const config = writeToolsConfig(dataDir, { payments: payments.url }, { 'payments.charge': { settleWindowMs: 5_000 } });
    const transport = new StdioClientTransport({
      command: process.execPath, args: ['bin/effectd.js', 'mcp', '--data-dir', dataDir, '--config', config],
      env: { ...process.env } as Record<string, string>, stderr: 'pipe',
    });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: 'effectd-stdio-test', version: '1.0.0' });
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await payments?.close();
  });

  it('lists the tools with their annotations', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('payments_refund')?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(byName.get('effectd_status')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(stderr).toContain('effectd mcp: serving stdio as default-agent');
  });

  it('commit-then-drop over stdio: unknown (not isError), the re-issued call settles, one charge', async () => {
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    // The re-issue path (reconcile-first) is the point here: no call waits for an inline settle.
    const call = () => client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-STDIO-1', amount: '12.00 USD' }, _meta: { 'dev.effectd/workflowId': 'wf-stdio', 'dev.effectd/step': 1, 'dev.effectd/waitMs': 0 } });
    const first = await call();
    await postJson(`${payments.url}/_admin/faults`, { rules: [] });
    expect(first.isError).toBe(false);
    expect(first.structuredContent).toMatchObject({ status: 'unknown' });
    const settled = await waitFor('the re-issued call to settle', async () => {
      const again = await call();
      expect(again.isError).toBe(false);
      return (again.structuredContent as { status: string }).status === 'done' ? again : undefined;
    }, 15_000, 200);
    const truth = (await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-STDIO-1');
    expect(truth).toHaveLength(1);
    expect(settled.structuredContent).toMatchObject({ receipt: truth[0]!.id });
    // No _meta: the default identity (content, test/int/mcp-no-identity.int.spec.ts), said in the answer.
    const noId = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-STDIO-2', amount: 100 } });
    expect(noId.isError).toBe(false);
    expect(noId.structuredContent).toMatchObject({ status: 'done', identity: { source: 'content' } });
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-STDIO-2')).toHaveLength(1);
  });
});
