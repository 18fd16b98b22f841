import { refuseInspectorSignal } from './signals.js';
import { resolve } from 'node:path';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { callerOf, type Caller } from '../gateway/caller.js';
import { identityFallbackOption } from '../mcp/identity.js';
import { buildProxyServer, connectRemote } from '../mcp/mcp-proxy.js';
import { buildMcpServer } from '../mcp/mcp-server.js';
import { loadSettings } from '../config/settings-loader.js';
import { createRuntime } from '../runtime/effectd-runtime.js';
import type { CommandSpec } from './cli-kit.js';

/**
 * `effectd mcp`: MCP over stdio for local clients (desktop and CLI agents), on an embedded effectd
 * (its own runtime, ledger and reconciler on --data-dir), or with `--url`, forwarding to a running
 * effectd's /mcp (src/mcp/mcp-proxy.ts). stdout carries only JSON-RPC: every log line goes to stderr.
 */
export const mcpCommand: CommandSpec = {
  name: 'mcp',
  summary: 'Serve MCP over stdio for a local agent (desktop or CLI client), on an embedded effectd or forwarding to a running one (--url).',
  usage: 'effectd mcp [--data-dir ./.effectd] [--ledger sqlite:|postgres://…] [--config effectd.config.json] [--token T | EFFECTD_TOKEN] [--mcp-identity-fallback content|off]\n       effectd mcp --url http://127.0.0.1:8080/mcp --token T',
  options: {
    url: { type: 'string' },
    'mcp-identity-fallback': { type: 'string' },
    'mcp-identity-window-ms': { type: 'string' },
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
    ['--url URL', 'forward to a running effectd\'s Streamable HTTP endpoint (…/mcp) with --token instead of embedding one: tools/list and tools/call go there, _meta unchanged'],
    ['--mcp-identity-fallback M', 'embedded only (or EFFECTD_MCP_IDENTITY_FALLBACK). content (the default): calls without _meta identity get workflow = credential + a sliding window (--mcp-identity-window-ms, default 3600000), step = the call\'s content; identical calls in the window are one effect unless the effectd_repeat argument says why, else a false dedup. off: refused. With --url the running effectd decides'],
  ],
  async run(values, _positionals, env) {
    // stdout is the protocol: anything else written there breaks the client.
    console.log = (...args: unknown[]) => console.error(...args);
    // --url here is the MCP endpoint to forward to, not EFFECTD_URL (the operator commands' effectd).
    const settings = loadSettings(env, { dataDir: values['data-dir'], ledger: values.ledger, config: values.config, token: values.token });
    if (values.url !== undefined) return forward(String(values.url), settings.token);
    const identityFallback = identityFallbackOption({ mode: values['mcp-identity-fallback'] ?? settings.mcpIdentity.fallback, windowMs: values['mcp-identity-window-ms'] ?? settings.mcpIdentity.windowMs });
    if (identityFallback?.mode === 'header') throw new Error('--mcp-identity-fallback header reads HTTP headers: it is for effectd start (Streamable HTTP), not stdio; use content here, or set _meta');
    const dataDir = resolve(settings.dataDir ?? '.effectd');
    const runtime = await createRuntime({ dataDir, settings });
    const { token } = settings;
    let caller: Caller;
    if (token) caller = runtime.gateway.authenticate(token, 'mcp');
    else {
      const agent = runtime.credentials.first('agent');
      if (!agent) throw new Error(`no agent credential in ${runtime.credentialsFile.file}: add one, or pass --token`);
      const { token: _token, ...principal } = agent;
      caller = callerOf(principal, 'mcp');
    }
    runtime.startReconciler();
    const handle = serveStdio(() => buildMcpServer(runtime, caller, identityFallback ? { identityFallback } : {}), { onerror: (error) => console.error(`effectd mcp: ${error.message}`) });
    console.error(`effectd mcp: serving stdio as ${caller.name} (tenant ${caller.tenant}); data dir ${dataDir}; tools: ${runtime.tools.list().map((t) => t.name).join(', ')}`);
    await stdinClosed();
    await handle.close();
    await runtime.close();
    return 0;
  },
};

/** `--url`: stdio in, the running effectd's /mcp out. */
async function forward(url: string, token: string | undefined): Promise<number> {
  const remote = await connectRemote(url, token);
  const handle = serveStdio(() => buildProxyServer(remote), { onerror: (error) => console.error(`effectd mcp: ${error.message}`) });
  console.error(`effectd mcp: serving stdio, forwarding to ${url} (${remote.client.getServerVersion()?.name ?? 'MCP server'} ${remote.client.getServerVersion()?.version ?? ''})`);
  await stdinClosed();
  await handle.close();
  await remote.close();
  return 0;
}

function stdinClosed(): Promise<void> {
  refuseInspectorSignal((line) => console.error(line));
  return new Promise<void>((done) => {
    process.stdin.once('end', done);
    process.stdin.once('close', done);
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });
}
