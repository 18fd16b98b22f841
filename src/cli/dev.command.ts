import { refuseInspectorSignal } from './signals.js';
import { join, resolve } from 'node:path';
import { startHttpServer, type HttpServer } from '../api/http-server.js';
import { spawnSimulator, type SimulatorProcess } from '@effectd/simulators';
import { createLogger, type Logger } from '../logging/logger.js';
import { createRuntime, type EffectdRuntime } from '../runtime/effectd-runtime.js';
import { startTracing, type TracingHandle } from '../tracing/start-tracing.js';
import { portOption, type CommandSpec } from './cli-kit.js';
import { Drain } from './drain.js';
import { loadSettings } from '../config/settings-loader.js';
import { identityFallbackOption } from '../mcp/identity.js';
import { loadConfig } from '../config/config-loader.js';
import { readConfigFile } from '../config/read-config-file.js';
import { cliInvocation, dataDirFlag, tokenCommandFor, tokenCommandLine } from './token.command.js';

/** The built-in providers (config/builtin-tools.json) and the simulator that plays each. */
const DEV_PROVIDERS: readonly { provider: string; kind: string; args: string[] }[] = [
  { provider: 'payments', kind: 'payments', args: [] },
  { provider: 'payments-v2', kind: 'payments', args: ['--api-version', 'v2'] },
  { provider: 'email', kind: 'email', args: [] },
  { provider: 'cloud', kind: 'cloud', args: [] },
  { provider: 'weak', kind: 'weak', args: [] },
  { provider: 'travel', kind: 'travel', args: [] },
];

interface DevSimulator { provider: string; process: SimulatorProcess }

/** Set once dev stops (a signal, the drain, an exit): the simulators' exits are expected from then on. */
let stopping = false;

export const devCommand: CommandSpec = {
  name: 'dev',
  summary: 'Run a development server: effectd on SQLite with a simulated provider for every built-in tool, each in its own process.',
  usage: 'effectd dev [--port 8080] [--host 127.0.0.1] [--data-dir ./.effectd-dev] [--config effectd.config.json]',
  options: { port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' }, config: { type: 'string' } },
  optionHelp: [
    ['--port N', 'HTTP port (default 8080; 0 picks a free one)'],
    ['--host H', 'address to listen on (default 127.0.0.1)'],
    ['--data-dir D', 'the dev ledger, secret and credentials (default ./.effectd-dev); the simulators keep their state in memory only'],
    ['--config FILE', 'your providers, tools and sagas, as for effectd start (or EFFECTD_CONFIG); only the simulators of the built-in providers its tools use start, and answer for them'],
  ],
  async run(values, _positionals, env) {
    const settings = loadSettings(env, { config: values.config });
    const port = portOption(values.port, 8080);
    const host = String(values.host ?? '127.0.0.1');
    const dataDir = resolve(String(values['data-dir'] ?? '.effectd-dev'));
    const drainMs = settings.drainTimeoutMs;
    const logger = createLogger({ fd: 1, log: settings.log });
    const drain = new Drain(drainMs, logger);
    refuseInspectorSignal((line) => logger.warn(line));
    const tracing = startTracing(settings.tracing, (line) => logger.warn(line));
    // Only the simulators of the built-in providers this configuration's tools use (all of them without --config).
    const used = await providersUsed(settings.configFile);
    const simulators = await startSimulators(logger, DEV_PROVIDERS.filter((p) => used.has(p.provider)));
    let runtime: EffectdRuntime | undefined;
    let server: HttpServer | undefined;
    try {
      const providerUrls = Object.fromEntries(simulators.map((s) => [s.provider, s.process.url]));
      runtime = await createRuntime({ dataDir, settings, providerUrls, logger });
      // /mcp takes calls without _meta identity as `effectd start` does (EFFECTD_MCP_IDENTITY_FALLBACK, content by default).
      const identityFallback = identityFallbackOption({ mode: settings.mcpIdentity.fallback, windowMs: settings.mcpIdentity.windowMs });
      server = await startHttpServer(runtime, port, host, settings.http, identityFallback ? { identityFallback } : {});
      runtime.startReconciler();
    } catch (error) {
      await server?.close();
      await runtime?.close();
      await stopAll(simulators);
      await tracing?.shutdown();
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new Error(`${host}:${port} is already in use (another effectd dev?): stop it, or pass --port N (0 picks a free port)`);
      throw error;
    }
    process.stdout.write(banner(server.url, runtime, simulators, dataDir, tracing));
    const [http, rt] = [server, runtime];
    return drain.serveUntilDrained([
      [{ name: 'HTTP ingress', close: () => http.close(), inFlight: () => `unanswered requests: ${http.inFlight()}` }],
      [{ name: 'runtime (reconciler, saga workers, ledger)', close: () => rt.close() }],
      ...(tracing ? [[{ name: 'trace export', close: () => tracing.shutdown() }]] : []),
      // Last: an effect in flight during the drain still reaches its provider.
      [{ name: 'simulated providers', close: () => stopAll(simulators) }],
    ]);
  },
};

/** Starts every simulator at once on free ports; if one fails the others are stopped. Any exit of dev takes them along. */
async function startSimulators(logger: Logger, providers: typeof DEV_PROVIDERS): Promise<DevSimulator[]> {
  const started = await Promise.allSettled(providers.map(async ({ provider, kind, args }) => ({ provider, process: await spawnSimulator(kind, args) })));
  const running = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stopAll(running);
    throw new Error(`a simulated provider did not start: ${(failed.reason as Error).message}`);
  }
  // Ctrl-C in a terminal reaches the simulators too (one process group): from a stop signal on, their exits are expected.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (stopping = true));
  for (const s of running) {
    s.process.child.once('exit', (code, signal) => {
      if (!stopping) logger.error({ event: 'SimulatorExited', provider: s.provider, code, signal }, `simulated provider ${s.provider} exited (${code ?? signal}); its tools cannot reach it now: restart effectd dev`);
    });
  }
  process.once('exit', () => {
    stopping = true;
    for (const s of running) if (s.process.child.exitCode === null && s.process.child.signalCode === null) s.process.child.kill('SIGTERM');
  });
  return running;
}

async function stopAll(simulators: readonly DevSimulator[]): Promise<void> {
  stopping = true;
  await Promise.all(simulators.map((s) => s.process.stop()));
}

/** The providers some tool of the configuration names (the built-in tools' without a config file). */
async function providersUsed(configFile: string | undefined): Promise<Set<string>> {
  const config = loadConfig({ user: configFile ? await readConfigFile(configFile) : undefined });
  return new Set(config.tools.map((t) => t.provider));
}

/** Arguments that work for the built-in tools "Try it" may call, in the order it prefers them. */
const TRY_ARGS: readonly [string, Record<string, unknown>][] = [
  ['payments.charge', { invoiceId: 'INV-1', amount: '49.00 USD' }],
  ['email.send', { to: 'someone@example.com', subject: 'Hello from effectd dev', text: 'It works.' }],
  ['weak.notify', { channel: 'ops', about: 'effectd dev', text: 'It works.' }],
  ['travel.hold-flight', { flight: 'TP1946', date: '2027-06-12', passenger: 'Ana Lima' }],
  ['cloud.create-instance', { name: 'dev-1', size: 'small', image: 'debian-12', region: 'eu-west-1' }],
];

/** "Try it" submits a tool this configuration has; a config of only its own tools is pointed at their schemas. */
function tryLines(url: string, runtime: EffectdRuntime): string[] {
  const names = new Set(runtime.tools.list().map((t) => t.name));
  const known = TRY_ARGS.find(([name]) => names.has(name));
  if (known) {
    return [
      `    curl -s -X POST ${url}/v1/effects -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\`,
      `      -d '${JSON.stringify({ workflowId: 'wf-1', step: 1, tool: known[0], args: known[1] })}'`,
    ];
  }
  const first = [...names][0];
  return [
    `    curl -s ${url}/v1/tools -H "authorization: Bearer $TOKEN"   # your tools (${[...names].join(', ') || 'none'}) and the JSON Schema of their arguments`,
    ...(first ? [`    curl -s -X POST ${url}/v1/effects -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"workflowId":"wf-1","step":1,"tool":"${first}","args":{…}}'`] : []),
  ];
}

/**
 * How to make one effect escalate, to try the console's resolve form (docs/watching.md): the weak
 * simulator drops the reply of the next notification after acting on it; weak.notify has neither a
 * key nor a lookup, so only a human can tell. Printed when this config has weak.notify on it.
 */
function escalateLines(url: string, runtime: EffectdRuntime, simulators: readonly DevSimulator[]): string[] {
  const weak = simulators.find((s) => s.provider === 'weak');
  if (!weak || !runtime.tools.list().some((t) => t.name === 'weak.notify' && t.provider.name === 'weak')) return [];
  return [
    '',
    '  Make one escalate (then resolve it in the console as the operator; docs/watching.md):',
    `    curl -s -w '\\n' -X POST ${weak.process.url}/_admin/faults -H 'content-type: application/json' -d '{"rules":[{"match":{"method":"POST","pathPrefix":"/notify"},"action":{"type":"drop-after-mutation"}}]}'`,
    '    N=$(date +%s)',
    `    curl -s -w '\\n' -X POST ${url}/v1/effects -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -H 'prefer: wait=0' \\`,
    `      -d '{"workflowId":"try-resolve-'$N'","step":1,"tool":"weak.notify","args":{"channel":"ops","about":"try '$N'","text":"hello"}}'`,
  ];
}

function banner(url: string, runtime: EffectdRuntime, simulators: readonly DevSimulator[], dataDir: string, tracing: TracingHandle | undefined): string {
  const cli = cliInvocation();
  const toolsOf = (provider: string) => runtime.tools.list().filter((t) => t.provider.name === provider).map((t) => t.name);
  const width = Math.max(...simulators.map((s) => s.provider.length));
  const { file, created } = runtime.credentialsFile;
  const row = (label: string, value: string) => `  ${label.padEnd(16)}${value}`;
  return [
    '',
    'effectd dev — effectd with a simulated provider for every built-in tool (for development: the simulators start empty on every run; the ledger in the data dir stays)',
    '',
    row('HTTP API', `${url}  (POST /v1/effects, GET /v1/workflows/:id, GET /v1/effects?state=attention)`),
    row('Console', `${url}/`),
    row('MCP', `${url}/mcp  (Streamable HTTP; bearer token)`),
    row('API docs', `${url}/docs  (OpenAPI at ${url}/openapi.json)`),
    row('Metrics', `${url}/metrics`),
    row('Traces', tracing?.describe.replace(/^traces: /, '') ?? 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them over OTLP/HTTP)'),
    '',
    simulators.length ? '  Simulated providers:' : '  Simulated providers: none (no tool of this config uses a built-in provider)',
    ...simulators.map((s) => {
      const tools = toolsOf(s.provider);
      return `    ${s.provider.padEnd(width)}  ${s.process.url}  pid ${s.process.pid}  (${tools.length > 0 ? tools.join(', ') : 'no tool of this config uses it'})`;
    }),
    '',
    row('Ledger', `${runtime.ledger.kind} at ${join(dataDir, 'ledger.db')}`),
    row('Credentials', `${file}${created ? ' (created now)' : ''}`),
    row('Agent token', tokenCommandLine(dataDir)),
    row('Operator token', tokenCommandFor(dataDir, 'operator')),
    '',
    '  Try it:',
    `    ${tokenCommandLine(dataDir)}`,
    ...tryLines(url, runtime),
    `    ${cli} effects --state attention${url === 'http://127.0.0.1:8080' ? '' : ` --url ${url}`}${dataDirFlag(dataDir)}`,
    ...escalateLines(url, runtime, simulators),
    '',
    'Ctrl-C stops effectd (drained) and the simulators. The log follows (EFFECTD_LOG_LEVEL, EFFECTD_LOG_FORMAT=json|pretty).',
    '',
  ].join('\n');
}
