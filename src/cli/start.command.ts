import { refuseInspectorSignal } from './signals.js';
import { resolve } from 'node:path';
import { startHttpServer } from '../api/http-server.js';
import { loadSettings, type Settings } from '../config/settings-loader.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { identityFallbackOption } from '../mcp/identity.js';
import type { McpHttpOptions } from '../mcp/mcp-http.js';
import { watchKafkaLag } from '../metrics/kafka-lag.js';
import { reloadCredentials } from '../runtime/credentials.js';
import { createRuntime, type EffectdRuntime } from '../runtime/effectd-runtime.js';
import { startKafkaIngress } from '../transport/kafka/kafka-ingress.js';
import { kafkaIngressSettings } from '../transport/kafka/kafka-settings.js';
import { portOption, type CommandSpec } from './cli-kit.js';
import { Drain, type DrainStep } from './drain.js';
import { startTracing } from '../tracing/start-tracing.js';
import { credentialsLine } from './token.command.js';
import { isWorker, onDrainRequest, refuseLedgerForWorkers, reportReady, runPrimary, workerCount, workerNumber } from './workers.js';

export const startCommand: CommandSpec = {
  name: 'start',
  summary: 'Run the effectd service: HTTP ingress on the embedded SQLite ledger unless --ledger says otherwise.',
  usage: 'effectd start [--port 8080] [--host 127.0.0.1] [--data-dir ./.effectd] [--ledger sqlite:|postgres://…] [--config effectd.config.mjs] [--kafka host:9092[,host2:9092] [--group effectd] [--no-http]] [--workers N|auto]',
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
    workers: { type: 'string' },
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
    ['--config FILE', 'your providers, tools and sagas: effectd.config.mjs (an ES module, defineConfig from \'effectd\') or .json (or EFFECTD_CONFIG); built-in simulator tools only with builtinTools: true; check it with effectd config check'],
    ['--workers N', 'run N effectd worker processes sharing the HTTP port (node:cluster; auto = one per core; or EFFECTD_WORKERS; default 1); needs a PostgreSQL ledger; SIGHUP and SIGTERM reach every worker, a worker that dies is replaced; /metrics merges every worker\'s (counters summed, ledger gauges once)'],
    ['--no-reconciler', 'do not reconcile unknown effects in this process (run it in another one)'],
    ['--kafka BROKERS', 'also consume effect commands from Kafka (topic effectd.commands, outcomes to effectd.outcomes, dead letters to effectd.dlq; EFFECTD_KAFKA_* env overrides)'],
    ['--group G', 'Kafka consumer group shared by all instances (default effectd, or EFFECTD_KAFKA_GROUP); instances must share EFFECTD_SECRET'],
    ['--no-http', 'Kafka ingress only: no HTTP port'],
    ['--mcp-anonymous-agent', 'admit MCP calls without a token at /mcp as the first agent credential (local tools such as the MCP conformance suite); refused unless --host is 127.0.0.1 or ::1'],
    ['--mcp-identity-fallback M', 'the identity of MCP calls without _meta identity (or EFFECTD_MCP_IDENTITY_FALLBACK). content (the default): workflow from the credential + a sliding window (--mcp-identity-window-ms, default 3600000), step from the call\'s content; identical calls in the window are one effect unless the effectd_repeat argument says why, else a false dedup. header: workflowId and step from HTTP headers (--mcp-workflow-header, default X-Effectd-Workflow-Id; --mcp-step-header, default X-Effectd-Step). off: refused'],
    ['EFFECTD_LOG_LEVEL', 'environment: fatal, error, warn, info (default), debug, trace or silent'],
    ['EFFECTD_LOG_FORMAT', 'environment: json or pretty (default: pretty on a terminal, JSON lines otherwise); the log is on stdout'],
  ],
  async run(values, _positionals, env) {
    // Every setting, checked before anything starts: a bad value stops the start naming the variable or flag.
    const settings = loadSettings(env, { dataDir: values['data-dir'], ledger: values.ledger, config: values.config, workers: values.workers, group: values.group });
    const dataDir = resolve(settings.dataDir ?? '.effectd');
    const drainMs = settings.drainTimeoutMs;
    // What start writes on stdout is its log: JSON lines, or pino-pretty's on a terminal (EFFECTD_LOG_FORMAT, EFFECTD_LOG_LEVEL).
    const workers = workerCount(settings.workers);
    if (workers > 1 && !isWorker()) {
      // The primary: checks what would fail every worker, creates the secret and the credentials once, then forks and supervises.
      if (values['no-http'] && !values.kafka) throw new Error('--no-http needs --kafka: effectd needs at least one ingress');
      refuseLedgerForWorkers(settings.ledger.url, workers);
      return runPrimary({ workers, dataDir, drainMs, settings, logger: createLogger({ fd: 1, log: settings.log }) });
    }
    const worker = workerNumber(settings);
    const logger = worker === undefined ? createLogger({ fd: 1, log: settings.log }) : createLogger({ fd: 1, log: settings.log }).child({ worker });
    const drain = new Drain(drainMs, logger);
    refuseInspectorSignal((line) => logger.warn({ event: 'SignalIgnored', signal: 'SIGUSR1' }, line));
    onDrainRequest((signal) => drain.request(signal));
    // Traces only when the environment asks (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER=otlp); a bad value stops the start.
    const tracing = startTracing(settings.tracing, (line) => logger.warn(line));
    const runtime = await createRuntime({ dataDir, settings, logger });
    if (values['no-http'] && !values.kafka) throw new Error('--no-http needs --kafka: effectd needs at least one ingress');
    process.on('SIGHUP', () => reloadOnHangup(runtime, logger));
    const server = values['no-http'] ? undefined : await startHttpServer(runtime, portOption(values.port, 8080), String(values.host ?? '127.0.0.1'), settings.http, mcpOptions(values, settings, logger));
    const snapshot = values['no-reconciler'] ? undefined : runtime.startReconciler();
    // A worker does not say "listening on": the primary does, once every worker serves.
    if (server && worker !== undefined) logger.info({ event: 'WorkerListening', url: server.url }, `effectd worker ${worker} (pid ${process.pid}) serves ${server.url}`);
    else if (server) logger.info({ event: 'Listening', url: server.url }, `effectd listening on ${server.url}  (POST /v1/effects, GET /v1/workflows/:id, MCP at /mcp, /healthz, /metrics; operator console at ${server.url}/)`);
    const kafka = values.kafka ? await startKafkaIngress(runtime, kafkaIngressSettings(String(values.kafka), settings.kafka)) : undefined;
    const kafkaLag = kafka ? watchKafkaLag(runtime.metrics, { brokers: kafka.settings.brokers, groupId: kafka.settings.groupId, topics: [kafka.settings.topics.commands], log: (line) => logger.warn(line) }) : undefined;
    if (kafka) {
      const { brokers, groupId, topics } = kafka.settings;
      logger.info({ event: 'Consuming', topic: topics.commands, brokers, groupId }, `effectd consuming ${topics.commands} from ${brokers.join(',')} as group ${groupId}  (outcomes → ${topics.outcomes} or the command's replyTopic, dead letters → ${topics.deadLetters})`);
    }
    const tools = runtime.tools.list().map((t) => t.name);
    logger.info({ event: 'Ledger', ledger: runtime.ledger.kind }, `ledger: ${runtime.ledger.kind}${runtime.ledger.kind === 'sqlite' ? ` at ${dataDir}/ledger.db` : ''}`);
    logger.info({ event: 'DataDir', dataDir, secretOrigin: runtime.secretOrigin }, `data dir: ${dataDir}  (secret: ${runtime.secretOrigin})`);
    logger.info({ event: 'Credentials', file: runtime.credentialsFile.file, created: runtime.credentialsFile.created }, credentialsLine(runtime.credentialsFile, dataDir, settings.credentialsFile !== undefined));
    logger.info({ event: 'Tools', tools }, `tools: ${tools.join(', ')}`);
    logger.info({ event: 'Reconciler', running: snapshot !== undefined }, snapshot === undefined ? 'reconciler: off (--no-reconciler)' : `reconciler: running (${snapshot} open effects from its snapshot; catching up from the ledger)`);
    logger.info({ event: 'Tracing', exporting: tracing !== undefined }, tracing?.describe ?? 'traces: off (set OTEL_EXPORTER_OTLP_ENDPOINT to export them over OTLP/HTTP)');
    logger.info({ event: 'Signals' }, `signals: SIGTERM/SIGINT drain and exit 0 (up to ${drainMs} ms, EFFECTD_DRAIN_TIMEOUT_MS); SIGHUP reloads ${runtime.credentialsFile.file}`);
    const ingresses: DrainStep[] = [
      ...(server ? [{ name: 'HTTP ingress', close: () => server.close(), inFlight: () => `unanswered requests: ${server.inFlight()}` }] : []),
      ...(kafka ? [{ name: 'Kafka ingress', close: () => kafka.close(), inFlight: () => 'its running batches' }] : []),
      ...(kafkaLag ? [{ name: 'Kafka lag watcher', close: () => kafkaLag.close() }] : []),
    ];
    reportReady(server?.url);
    const traceExport: DrainStep[][] = tracing ? [[{ name: 'trace export', close: () => tracing.shutdown() }]] : [];
    return drain.serveUntilDrained([ingresses, [{ name: 'runtime (reconciler, saga workers, ledger)', close: () => runtime.close() }], ...traceExport]);
  },
};

function mcpOptions(values: Record<string, string | boolean | undefined>, settings: Settings, logger: Logger): Omit<McpHttpOptions, 'host'> {
  const identityFallback = identityFallbackOption({ mode: values['mcp-identity-fallback'] ?? settings.mcpIdentity.fallback, workflowHeader: values['mcp-workflow-header'], stepHeader: values['mcp-step-header'], windowMs: values['mcp-identity-window-ms'] ?? settings.mcpIdentity.windowMs });
  if (identityFallback?.mode === 'header') logger.info(`MCP identity fallback: header (calls without _meta identity take it from ${identityFallback.workflowHeader} and ${identityFallback.stepHeader})`);
  if (identityFallback?.mode === 'content') logger.info(`MCP identity fallback: content (calls without _meta identity: workflow = credential + a ${identityFallback.windowMs} ms sliding window, step = the call's content; identical calls in the window are one effect unless effectd_repeat says why)`);
  if (!identityFallback) logger.info('MCP identity fallback: off (calls without _meta identity are refused)');
  return { anonymousAgent: values['mcp-anonymous-agent'] === true, ...(identityFallback ? { identityFallback } : {}) };
}

/** An operator rotates tokens by editing the credentials file and sending SIGHUP; a broken file changes nothing. */
function reloadOnHangup(runtime: EffectdRuntime, logger: Logger): void {
  const { file } = runtime.credentialsFile;
  try {
    logger.info({ event: 'CredentialsReloaded', file }, `effectd: SIGHUP: reloaded ${reloadCredentials(runtime.credentials, file)} credentials from ${file}`);
  } catch (error) {
    logger.error({ event: 'CredentialsKept', file }, `effectd: SIGHUP: kept the ${runtime.credentials.size} credentials loaded before: ${(error as Error).message} (fix ${file} and send SIGHUP again)`);
  }
}
