import { resolve } from 'node:path';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { callerOf, type Caller } from '../gateway/caller.js';
import { buildMcpServer } from '../mcp/mcp-server.js';
import { createRuntime } from '../runtime/effectd-runtime.js';
import type { CommandSpec } from './cli-kit.js';

/**
 * `effectd mcp`: MCP over stdio for local clients (desktop and CLI agents), on an embedded effectd
 * (its own runtime, ledger and reconciler on --data-dir). stdout carries only JSON-RPC: every log
 * line goes to stderr.
 */
export const mcpCommand: CommandSpec = {
  name: 'mcp',
  summary: 'Serve MCP over stdio for a local agent (desktop or CLI client), on an embedded effectd.',
  usage: 'effectd mcp [--data-dir ./.effectd] [--ledger sqlite:|postgres://…] [--config effectd.config.json] [--token T | EFFECTD_TOKEN]',
  options: {
    'data-dir': { type: 'string' },
    ledger: { type: 'string' },
    config: { type: 'string' },
    token: { type: 'string' },
  },
  optionHelp: [
    ['--data-dir D', 'the embedded ledger, secret and credentials (default ./.effectd, or EFFECTD_DATA_DIR)'],
    ['--ledger URL', 'sqlite:[file] (default) or postgres://user:pass@host/db (or EFFECTD_LEDGER)'],
    ['--config FILE', 'JSON file declaring providers and tools (or EFFECTD_CONFIG)'],
    ['--token T', 'act as the credential with this token (or EFFECTD_TOKEN); default: the first agent credential of the data dir'],
  ],
  async run(values) {
    // stdout is the protocol: anything else written there breaks the client.
    console.log = (...args: unknown[]) => console.error(...args);
    const dataDir = resolve(String(values['data-dir'] ?? process.env.EFFECTD_DATA_DIR ?? '.effectd'));
    const runtime = await createRuntime({ dataDir, ledgerUrl: values.ledger as string | undefined, configFile: values.config as string | undefined });
    const token = (values.token as string | undefined) ?? process.env.EFFECTD_TOKEN;
    let caller: Caller;
    if (token) caller = runtime.gateway.authenticate(token, 'mcp');
    else {
      const agent = runtime.credentials.first('agent');
      if (!agent) throw new Error(`no agent credential in ${runtime.credentialsFile.file}: add one, or pass --token`);
      const { token: _token, ...principal } = agent;
      caller = callerOf(principal, 'mcp');
    }
    runtime.startReconciler();
    const handle = serveStdio(() => buildMcpServer(runtime, caller), { onerror: (error) => console.error(`effectd mcp: ${error.message}`) });
    console.error(`effectd mcp: serving stdio as ${caller.name} (tenant ${caller.tenant}); data dir ${dataDir}; tools: ${runtime.tools.list().map((t) => t.name).join(', ')}`);
    await new Promise<void>((done) => {
      process.stdin.once('end', done);
      process.stdin.once('close', done);
      process.once('SIGTERM', done);
      process.once('SIGINT', done);
    });
    await handle.close();
    await runtime.close();
    return 0;
  },
};
