import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Settings } from '../config/settings-loader.js';
import { openDemoStage } from './demo-stage.js';

interface Outcome { status: string; message: string; replayed?: boolean; receipt?: string; effectId: string; waitedMs?: number }

/**
 * `effectd demo --mcp`: the demo's lost reply, with the scripted agent calling over MCP through the
 * official TypeScript client SDK (Streamable HTTP at /mcp). The harness re-issues the call as the
 * spec tells clients to after a broken stream: a new JSON-RPC id, the same `_meta` identity. The
 * ledger absorbs it, and the provider's own records show one charge.
 */
export async function runMcpDemo(settings: Settings, dataDirOption: string | undefined): Promise<number> {
  const stage = await openDemoStage(settings, dataDirOption, 'effectd demo --mcp — a lost reply over MCP, re-issued under a new JSON-RPC id, without a second charge', (url) => `serving MCP at ${url}/mcp`);
  const { runtime, server, say } = stage;
  // What the client sends, as seen on the wire: each tools/call's JSON-RPC id and its _meta.
  const sent: { id: unknown; meta: unknown }[] = [];
    const client = new Client({ name: 'effectd-demo-harness', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${runtime.credentials.first('agent')!.token}` } },
      fetch: (url, init) => {
        if (typeof init?.body === 'string') {
          for (const message of [JSON.parse(init.body)].flat() as { id?: unknown; method?: string; params?: { name?: string; _meta?: unknown } }[]) {
            if (message.method === 'tools/call' && message.params?.name === 'payments_charge') sent.push({ id: message.id, meta: message.params._meta });
          }
        }
        return fetch(url, init);
      },
    }));
    say(`3. The agent's harness connected with the official MCP client SDK (${client.getServerVersion()?.name} ${client.getServerVersion()?.version})`);
    await stage.armLostReply();
    say('4. Fault armed: the provider will commit the first charge, then drop the connection before replying.\n');

    const workflowId = `demo-mcp-${Date.now()}`;
    const meta = { 'dev.effectd/workflowId': workflowId, 'dev.effectd/step': 1 };
    const call = async (amount: unknown): Promise<Outcome & { isError: boolean }> => {
      const result = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-2291', amount }, _meta: meta });
      const wire = sent[sent.length - 1];
      say(`  tools/call JSON-RPC id ${String(wire?.id)}, _meta ${JSON.stringify(wire?.meta)}`);
      return { ...(result.structuredContent as unknown as Outcome), isError: result.isError === true };
    };

    say('Model: payments_charge {"invoiceId": "INV-2291", "amount": "49.00 USD"}  (the harness sets _meta: workflow, step 1)');
    const first = await call('49.00 USD');
    say(`  effectd → isError ${first.isError}: ${first.message}${first.waitedMs !== undefined ? ` (the reply was lost; settled with the provider inside this call, in ${first.waitedMs} ms)` : ''}\n`);
    say('Harness: re-issues the call as the MCP spec says after a broken stream (a new JSON-RPC id, the same _meta)');
    let second = await call('49.00 USD');
    say(`  effectd → isError ${second.isError}: ${second.message}`);
    for (let i = 0; second.status === 'unknown' && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      second = await call('49.00 USD');
      say(`  effectd → isError ${second.isError}: ${second.message}`);
    }
    say('\nModel (asks once more, now writing the amount as 4900; the harness keeps the same _meta)');
    const third = await call(4900);
    say(`  effectd → ${third.message}${third.replayed ? ' (answered from the ledger; the provider was not called)' : ''}\n`);

    const history = await client.callTool({ name: 'effectd_history', arguments: {}, _meta: { 'dev.effectd/workflowId': workflowId } });
    say(`effectd_history (facts from the ledger): ${(history.content as { text: string }[])[0]?.text ?? ''}`);

    const charges = await stage.groundTruth();
    const ids = new Set(sent.map((s) => JSON.stringify(s.id)));
    const metas = new Set(sent.map((s) => JSON.stringify(s.meta)));
    const ok = charges === 1 && first.status === 'done' && !first.isError && second.status === 'done' && third.status === 'done' && ids.size === sent.length && metas.size === 1 && second.effectId === first.effectId;
    say(`\n${ok ? 'OK' : 'UNEXPECTED'}: ${charges} charge(s) at the provider for ${sent.length} payments_charge calls under ${ids.size} different JSON-RPC ids with ${metas.size === 1 ? 'one' : metas.size} _meta identity; demo took ${stage.seconds()} s.`);
    return ok ? 0 : 1;
  } finally {
    await client.close().catch(() => undefined);
    await stage.close();
  }
}
