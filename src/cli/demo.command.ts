import type { AgentOutcome } from '../core/agent-outcome.js';
import type { CommandSpec } from './cli-kit.js';
import { runMcpDemo } from './demo-mcp.js';
import { openDemoStage } from './demo-stage.js';
import { loadSettings } from '../config/settings-loader.js';

export const demoCommand: CommandSpec = {
  name: 'demo',
  summary: 'Watch a charge whose reply is lost after the provider committed: settled inside the same call (done on the first answer), without a second charge.',
  usage: 'effectd demo [--data-dir DIR] [--mcp]',
  options: { 'data-dir': { type: 'string' }, mcp: { type: 'boolean' } },
  optionHelp: [
    ['--data-dir D', 'where the demo ledger lives (default: a fresh temporary directory)'],
    ['--mcp', 'the agent calls over MCP (official client SDK, Streamable HTTP at /mcp) and re-issues the call under a new JSON-RPC id'],
  ],
  async run(values, _positionals, env) {
    // The demo's ledger is its own (--data-dir, else a fresh temporary directory), never EFFECTD_DATA_DIR's.
    const settings = loadSettings(env);
    const dataDir = values['data-dir'] ? String(values['data-dir']) : undefined;
    if (values.mcp) return runMcpDemo(settings, dataDir);
    const stage = await openDemoStage(settings, dataDir, 'effectd demo — a lost reply, handled without a second charge', (url) => `listening on ${url}`);
    const { runtime, server, say } = stage;
    try {
      await stage.armLostReply();
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
      say(`  effectd → ${first.message}${first.waitedMs !== undefined ? ` (the reply was lost; effectd settled it with the provider inside this call, in ${first.waitedMs} ms)` : ''}\n`);
      say('Agent (retrying as models do, now writing the amount as 4900)');
      const second = await submit(4900);
      say(`  effectd → ${second.message}${second.replayed ? ' (the same effect: answered from the ledger; the provider was not called)' : ''}\n`);
      say('Agent (asks once more)');
      const third = await submit(4900);
      say(`  effectd → ${third.message}${third.replayed ? " (answered from the ledger; the provider was not called)" : ""}\n`);

      const timeline = (await (await fetch(`${server.url}/v1/workflows/${workflowId}`, { headers: { authorization } })).json()) as { timeline: { at: string; summary: string }[] };
      say(`Ledger timeline of workflow ${workflowId}:`);
      for (const entry of timeline.timeline) say(`  ${entry.at.slice(11, 23)}  ${entry.summary}`);

      const charges = await stage.groundTruth();
      const ok = charges === 1 && first.status === 'done' && first.waitedMs !== undefined && second.status === 'done' && second.replayed === true;
      say(`\n${ok ? 'OK' : 'UNEXPECTED'}: ${charges} charge(s) at the provider for 3 submissions; demo took ${stage.seconds()} s.`);
      return ok ? 0 : 1;
    } finally {
      await stage.close();
    }
  },
};
