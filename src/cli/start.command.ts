import { resolve } from 'node:path';
import { startHttpServer } from '../api/http-server.js';
import { identityFallbackOption } from '../mcp/identity.js';
import type { McpHttpOptions } from '../mcp/mcp-http.js';
import { watchKafkaLag } from '../metrics/kafka-lag.js';
import { reloadCredentials } from '../runtime/credentials.js';
import { createRuntime, type EffectdRuntime } from '../runtime/effectd-runtime.js';
import { startKafkaIngress } from '../transport/kafka/kafka-ingress.js';
import { kafkaIngressSettings } from '../transport/kafka/kafka-settings.js';
import { portOption, type CommandSpec } from './cli-kit.js';
import { Drain, drainTimeoutMs, type DrainStep } from './drain.js';

export const startCommand: CommandSpec = {
  name: 'start',
  summary: 'Run the effectd service: HTTP ingress on the embedded SQLite ledger unless --ledger says otherwise.',
  usage: 'effectd start [--port 8080] [--host 127.0.0.1] [--data-dir ./.effectd] [--ledger sqlite:|postgres://…] [--config effectd.config.json] [--kafka host:9092[,host2:9092] [--group effectd] [--no-http]]',
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    'data-dir': { type: 'string' },
    ledger: { type: 'string' },
    config: { type: 'string' },
    kafka: { type: 'string' },
    group: { type: 'string' },
    'no-http': { type: 'boolean' },
    'no-reconciler': { type: 'boolean' },
    'mcp-anonymous-agent': { type: 'boolean' },
    'mcp-identity-fallback': { type: 'string' },
    'mcp-workflow-header': { type: 'string' },
    'mcp-step-header': { type: 'string' },
    'mcp-identity-window-ms': { type: 'string' },
  },
  optionHelp: [
    ['--port N', 'HTTP port (default 8080; 0 picks a free one)'],
    ['--host H', 'address to listen on (default 127.0.0.1)'],
    ['--data-dir D', 'where the embedded ledger and the secret live (default ./.effectd, or EFFECTD_DATA_DIR)'],
    ['--ledger URL', 'sqlite:[file] (default) or postgres://user:pass@host/db (or EFFECTD_LEDGER)'],
    ['--config FILE', 'JSON file declaring providers and tools (or EFFECTD_CONFIG)'],
    ['--no-reconciler', 'do not reconcile unknown effects in this process (run it in another one)'],
    ['--kafka BROKERS', 'also consume effect commands from Kafka (topic effectd.commands, outcomes to effectd.outcomes, dead letters to effectd.dlq; EFFECTD_KAFKA_* env overrides)'],
    ['--group G', 'Kafka consumer group shared by all instances (default effectd, or EFFECTD_KAFKA_GROUP); instances must share EFFECTD_SECRET'],
    ['--no-http', 'Kafka ingress only: no HTTP port'],
    ['--mcp-anonymous-agent', 'admit MCP calls without a token at /mcp as the first agent credential (local tools such as the MCP conformance suite); refused unless --host is 127.0.0.1 or ::1'],
    ['--mcp-identity-fallback M', 'off by default: for MCP clients that cannot set _meta identity. header: workflowId and step from HTTP headers (--mcp-workflow-header, default X-Effectd-Workflow-Id; --mcp-step-header, default X-Effectd-Step). content: workflow from the credential + a time window (--mcp-identity-window-ms, default 3600000), step from the call\'s content; identical calls in the window are one effect, so an undeclared repeat is falsely deduplicated'],
  ],
  async run(values) {
    const dataDir = resolve(String(values['data-dir'] ?? process.env.EFFECTD_DATA_DIR ?? '.effectd'));
    const drainMs = drainTimeoutMs();
    const drain = new Drain(drainMs, console);
    const runtime = await createRuntime({ dataDir, ledgerUrl: values.ledger as string | undefined, configFile: values.config as string | undefined });
    if (values['no-http'] && !values.kafka) throw new Error('--no-http needs --kafka: effectd needs at least one ingress');
    process.on('SIGHUP', () => reloadOnHangup(runtime));
    const server = values['no-http'] ? undefined : await startHttpServer(runtime, portOption(values.port, 8080), String(values.host ?? '127.0.0.1'), undefined, mcpOptions(values));
    const snapshot = values['no-reconciler'] ? undefined : runtime.startReconciler();
    if (server) console.log(`effectd listening on ${server.url}  (POST /v1/effects, GET /v1/workflows/:id, MCP at /mcp, /healthz, /metrics; operator console at ${server.url}/)`);
    const kafka = values.kafka ? await startKafkaIngress(runtime, kafkaIngressSettings(String(values.kafka), { ...(values.group ? { groupId: String(values.group) } : {}) })) : undefined;
    const kafkaLag = kafka ? watchKafkaLag(runtime.metrics, { brokers: kafka.settings.brokers, groupId: kafka.settings.groupId, topics: [kafka.settings.topics.commands] }) : undefined;
    if (kafka) {
      const { brokers, groupId, topics } = kafka.settings;
      console.log(`effectd consuming ${topics.commands} from ${brokers.join(',')} as group ${groupId}  (outcomes → ${topics.outcomes} or the command's replyTopic, dead letters → ${topics.deadLetters})`);
    }
    console.log(`ledger: ${runtime.ledger.kind}${runtime.ledger.kind === 'sqlite' ? ` at ${dataDir}/ledger.db` : ''}`);
    console.log(`data dir: ${dataDir}  (secret: ${runtime.secretOrigin})`);
    console.log(`tools: ${runtime.tools.list().map((t) => t.name).join(', ')}`);
    console.log(snapshot === undefined ? 'reconciler: off (--no-reconciler)' : `reconciler: running (${snapshot} open effects from its snapshot; catching up from the ledger)`);
    console.log(`signals: SIGTERM/SIGINT drain and exit 0 (up to ${drainMs} ms, EFFECTD_DRAIN_TIMEOUT_MS); SIGHUP reloads ${runtime.credentialsFile.file}`);
    const ingresses: DrainStep[] = [
      ...(server ? [{ name: 'HTTP ingress', close: () => server.close(), inFlight: () => `unanswered requests: ${server.inFlight()}` }] : []),
      ...(kafka ? [{ name: 'Kafka ingress', close: () => kafka.close(), inFlight: () => 'its running batches' }] : []),
      ...(kafkaLag ? [{ name: 'Kafka lag watcher', close: () => kafkaLag.close() }] : []),
    ];
    return drain.serveUntilDrained([ingresses, [{ name: 'runtime (reconciler, saga workers, ledger)', close: () => runtime.close() }]]);
  },
};

function mcpOptions(values: Record<string, string | boolean | undefined>): Omit<McpHttpOptions, 'host'> {
  const identityFallback = identityFallbackOption({ mode: values['mcp-identity-fallback'], workflowHeader: values['mcp-workflow-header'], stepHeader: values['mcp-step-header'], windowMs: values['mcp-identity-window-ms'] });
  if (identityFallback?.mode === 'header') console.log(`MCP identity fallback: header (calls without _meta identity take it from ${identityFallback.workflowHeader} and ${identityFallback.stepHeader})`);
  if (identityFallback?.mode === 'content') console.log(`MCP identity fallback: content (calls without _meta identity: workflow = credential + ${identityFallback.windowMs} ms window, step = the call's content; identical calls in the window are one effect, an undeclared repeat is falsely deduplicated)`);
  return { anonymousAgent: values['mcp-anonymous-agent'] === true, ...(identityFallback ? { identityFallback } : {}) };
}

/** An operator rotates tokens by editing the credentials file and sending SIGHUP; a broken file changes nothing. */
function reloadOnHangup(runtime: EffectdRuntime): void {
  const { file } = runtime.credentialsFile;
  try {
    console.log(`effectd: SIGHUP: reloaded ${reloadCredentials(runtime.credentials, file)} credentials from ${file}`);
  } catch (error) {
    console.error(`effectd: SIGHUP: kept the ${runtime.credentials.size} credentials loaded before: ${(error as Error).message} (fix ${file} and send SIGHUP again)`);
  }
}
