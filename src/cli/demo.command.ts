import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHttpServer } from '../api/http-server.js';
import type { AgentOutcome } from '../core/agent-outcome.js';
import { simulatorCall, spawnSimulator } from '../harness/simulator-process.js';
import { createRuntime } from '../runtime/effectd-runtime.js';
import type { CommandSpec } from './cli-kit.js';
import { runMcpDemo } from './demo-mcp.js';

interface Charge { id: string; amount: number; currency: string; metadata: Record<string, string> }

export const demoCommand: CommandSpec = {
  name: 'demo',
  summary: 'Watch a charge whose reply is lost after the provider committed: unknown, then settled without a second charge.',
  usage: 'effectd demo [--data-dir DIR] [--mcp]',
  options: { 'data-dir': { type: 'string' }, mcp: { type: 'boolean' } },
  optionHelp: [
    ['--data-dir D', 'where the demo ledger lives (default: a fresh temporary directory)'],
    ['--mcp', 'the agent calls over MCP (official client SDK, Streamable HTTP at /mcp) and re-issues the call under a new JSON-RPC id'],
  ],
  async run(values) {
    if (values.mcp) return runMcpDemo(values['data-dir'] ? String(values['data-dir']) : undefined);
    const started = performance.now();
    const dataDir = values['data-dir'] ? resolve(String(values['data-dir'])) : mkdtempSync(join(tmpdir(), 'effectd-demo-'));
    const say = (line = '') => console.log(line);
    say('effectd demo — a lost reply, handled without a second charge\n');
    const payments = await spawnSimulator('payments');
    say(`1. Simulated payment provider (Stripe v1 semantics) running in its own process (pid ${payments.pid}) at ${payments.url}`);
    const runtime = await createRuntime({ dataDir, providerUrls: { payments: payments.url } });
    const server = await startHttpServer(runtime, 0);
    runtime.startReconciler();
    say(`2. effectd (embedded SQLite ledger at ${dataDir}/ledger.db) listening on ${server.url}`);
    try {
      await simulatorCall(payments.url, '/_admin/faults', { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
      say('3. Fault armed: the provider will commit the first charge, then drop the connection before replying.\n');

      const workflowId = `demo-${Date.now()}`;
      const authorization = `Bearer ${runtime.credentials.first('agent')!.token}`;
      const submit = async (amount: unknown): Promise<AgentOutcome> => {
        const res = await fetch(`${server.url}/v1/effects`, {
          method: 'POST', headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify({ workflowId, step: 1, tool: 'payments.charge', principal: 'demo-agent', args: { invoiceId: 'INV-2291', amount } }),
        });
        return (await res.json()) as AgentOutcome;
      };

      say('Agent: charge invoice INV-2291 for "49.00 USD" (workflow step 1)');
      const first = await submit('49.00 USD');
      say(`  effectd → ${first.message}\n`);
      say('Agent (retrying as models do, now writing the amount as 4900)');
      const second = await submit(4900);
      say(`  effectd → ${second.message}\n`);
      say('Agent (asks once more)');
      const third = await submit(4900);
      say(`  effectd → ${third.message}${third.replayed ? " (answered from the ledger; the provider was not called)" : ""}\n`);

      const timeline = (await (await fetch(`${server.url}/v1/workflows/${workflowId}`, { headers: { authorization } })).json()) as { timeline: { at: string; summary: string }[] };
      say(`Ledger timeline of workflow ${workflowId}:`);
      for (const entry of timeline.timeline) say(`  ${entry.at.slice(11, 23)}  ${entry.summary}`);

      const truth = await simulatorCall<{ charges: Charge[] }>(payments.url, '/_oracle/state');
      const requests = await simulatorCall<{ requests: { method: string; path: string; idempotencyKey: string | null; status: number | string; replayed: boolean }[] }>(payments.url, '/_admin/requests');
      say('\nProvider ground truth (its own records, not what effectd says):');
      for (const charge of truth.charges) say(`  charge ${charge.id}: ${charge.amount} ${charge.currency} for ${charge.metadata.invoice_id} (reference ${charge.metadata.effectd_ref})`);
      say(`  requests it received: ${requests.requests.filter((r) => r.method === 'POST').map((r) => `POST ${r.path} key=${r.idempotencyKey ?? '-'} → ${r.status}${r.replayed ? ' (replayed)' : ''}`).join('; ')}`);
      const ok = truth.charges.length === 1 && second.status === 'done' && first.status === 'unknown';
      say(`\n${ok ? 'OK' : 'UNEXPECTED'}: ${truth.charges.length} charge(s) at the provider for 3 submissions; demo took ${((performance.now() - started) / 1000).toFixed(1)} s.`);
      return ok ? 0 : 1;
    } finally {
      await server.close();
      await runtime.close();
      await payments.stop();
    }
  },
};
