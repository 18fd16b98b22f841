import { storedEncoding } from '../ledger/postgres-encoding.js';
import { bodyCompression } from '../ledger/postgres-body.js';
import { createHash, randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Ledger } from '../ledger/ledger.port.js';
import { GroupCommitLedger } from '../ledger/group-commit-ledger.js';
import { openLedger } from '../ledger/open-ledger.js';
import { logAppendedEvents } from '../logging/event-log.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { effectGauges } from '../metrics/effect-gauges.js';
import { PromMetrics } from '../metrics/prom-metrics.js';
import { configuredSagas } from './configured-sagas.js';
import { readConfigFile } from '../config/read-config-file.js';
import { loadConfig } from '../config/config-loader.js';
import { closeUpstreams } from '../providers/mcp-provider.js';
import { ToolRegistry } from '../providers/tool-registry.js';
import { EffectShell, type Dispatcher } from '../shell/effect-shell.js';
import { DEFAULT_MAX_CACHED_EFFECTS } from '../shell/workflow-store.js';
import { ReconcilerWorker } from '../shell/reconciler-worker.js';
import type { SagaRegistry } from '../shell/saga-registry.js';
import { SagaRunner } from '../shell/saga-runner.js';
import { SagaWorker } from '../shell/saga-worker.js';
import { DEFAULT_RECENT_EFFECTS, OpenEffectsProjection } from './open-effects-projection.js';
import { Gateway, type EffectIndex } from '../gateway/gateway.js';
import { answerBudgetSettings } from '../core/answer-budget.js';
import { tenantContentIndex, tenantWindowOn } from './tenant-content-index.js';
import { CredentialBook, loadCredentials } from './credentials.js';
import { loadSecret } from './secret.js';
import { ensurePrivateDir } from './private-files.js';
import { EffectdError } from '../core/errors.js';

export interface RuntimeOptions {
  dataDir: string;
  /** `sqlite:[path]` (default) or `postgres://…`; EFFECTD_LEDGER when not given. */
  ledgerUrl?: string;
  configFile?: string;
  providerUrls?: Record<string, string>;
  instanceId?: string;
  leaseMarginMs?: number;
  clock?: () => number;
  dispatcher?: Dispatcher;
  /** How often the reconciler looks at open effects (default 200 ms). */
  reconcileTickMs?: number;
  /** Effects held in cached workflow states (default 20,000; EFFECTD_WORKFLOW_CACHE). */
  workflowCacheEffects?: number;
  /** Effects in the read side's recent window (default 10,000; EFFECTD_RECENT_EFFECTS). */
  recentEffects?: number;
  /** Where the ledger's notable events and the runtime's faults are logged (default: stderr, EFFECTD_LOG_LEVEL or warn). */
  logger?: Logger;
}

/** One effectd instance's parts, wired once; transports (HTTP, Kafka, CLI) only call into it. */
export interface EffectdRuntime {
  /** The application layer every ingress calls. */
  readonly gateway: Gateway;
  readonly shell: EffectShell;
  readonly ledger: Ledger;
  readonly tools: ToolRegistry;
  readonly metrics: PromMetrics;
  readonly instanceId: string;
  readonly dataDir: string;
  readonly secretOrigin: string;
  readonly credentials: CredentialBook;
  /** Where the credentials live, and whether this start created them. */
  readonly credentialsFile: { file: string; created: boolean };
  readonly now: () => number;
  readonly openEffects: OpenEffectsProjection;
  readonly reconcilerWorker: ReconcilerWorker;
  readonly sagas: SagaRegistry;
  readonly sagaRunner: SagaRunner;
  readonly logger: Logger;
  /** Loads the open-effects snapshot and starts reconciling in the background; returns the snapshot's size. */
  startReconciler(): number;
  close(): Promise<void>;
}

export async function createRuntime(options: RuntimeOptions): Promise<EffectdRuntime> {
  // 0700, files 0600 (the ledger, the snapshot, the secret, the credentials): see private-files.ts.
  ensurePrivateDir(options.dataDir);
  const logger = options.logger ?? createLogger({ fd: 2, env: process.env, defaultLevel: 'warn' });
  ensurePrivateDir(join(options.dataDir, 'projections'));
  const configFile = options.configFile ?? process.env.EFFECTD_CONFIG;
  const config = loadConfig({ env: process.env, user: configFile ? await readConfigFile(configFile) : undefined, providerUrls: options.providerUrls, onOverride: (line) => logger.info({ event: 'ProviderOverride' }, `config: ${line}`) });
  const tools = new ToolRegistry(config);
  const { secret, origin } = loadSecret(options.dataDir);
  const credentialSource = loadCredentials(options.dataDir);
  const ledgerUrl = options.ledgerUrl ?? process.env.EFFECTD_LEDGER ?? `sqlite:${join(resolve(options.dataDir), 'ledger.db')}`;
  // Group commit: concurrent effects share durable commits (one fsync for many appends).
  const ledger = new GroupCommitLedger(await openLedger(ledgerUrl, options.dataDir, { encoding: storedEncoding(process.env), compression: bodyCompression(process.env) }));
  const metrics = new PromMetrics();
  metrics.initTools(tools.list().map((t) => t.name));
  const instanceId = options.instanceId ?? `effectd-${process.pid}-${randomUUID().slice(0, 8)}`;
  const now = options.clock ?? Date.now;
  // The snapshot is named after the ledger it describes, so switching ledgers never mixes positions.
  const ledgerIdentity = createHash('sha256').update(ledgerUrl.replace(/\/\/[^@/]*@/, '//')).digest('hex').slice(0, 16);
  const recentEffects = options.recentEffects ?? positiveIntFromEnv('EFFECTD_RECENT_EFFECTS', DEFAULT_RECENT_EFFECTS);
  // The content index across workflows is kept only for a tenant content window, its one reader.
  const openEffects = new OpenEffectsProjection(ledger, ledgerIdentity, join(options.dataDir, 'projections', `open-effects-${ledgerIdentity}.json`), recentEffects, tenantWindowOn(config.contentIndex.tenantWindowMs));
  const shell = new EffectShell({
    ledger, tools, secret, instanceId, clock: now, metrics, leaseMarginMs: options.leaseMarginMs, dispatcher: options.dispatcher,
    tenantContentIndex: tenantContentIndex(openEffects, config.contentIndex.tenantWindowMs),
    maxCachedEffects: options.workflowCacheEffects ?? positiveIntFromEnv('EFFECTD_WORKFLOW_CACHE', DEFAULT_MAX_CACHED_EFFECTS),
    onError: (what, error) => logger.error({ err: { message: (error as Error).message } }, `${what}: ${(error as Error).message}`),
  });
  const reconcilerWorker = new ReconcilerWorker(openEffects, shell.runner, now, {
    tickMs: options.reconcileTickMs,
    onError: (error) => logger.error({ err: { message: (error as Error).message } }, `reconciler: ${(error as Error).message}`),
  });
  // A scrape reads no ledger: the read side follows it in the background.
  metrics.beforeScrape(async () => {
    await openEffects.fresh();
    metrics.setEffectGauges(effectGauges(openEffects.list().map((e) => e.state), now(), openEffects.settledCounts()));
    metrics.setWorkflowCache(shell.core.store.stats());
  });
  const sagas = configuredSagas(config, tools);
  const sagaRunner = new SagaRunner(shell, sagas, metrics, config.sagas.compensationRetry);
  metrics.initSagas(sagas.names());
  const sagaWorker = new SagaWorker(openEffects, sagaRunner, options.reconcileTickMs ?? 250, (error) => logger.error({ err: { message: (error as Error).message } }, `saga worker: ${(error as Error).message}`));
  const effects: EffectIndex = {
    recentLimit: recentEffects,
    async locate(effectId) {
      return openEffects.get(effectId)?.stream ?? (await ledger.locateEffect?.(effectId));
    },
    fresh: () => openEffects.fresh(),
    open: () => openEffects.list().map((e) => e.state),
    recent: () => [...openEffects.recent()].map((e) => e.state),
    known: (effectId) => openEffects.get(effectId)?.state,
  };
  const credentials = new CredentialBook(credentialSource.credentials);
  const gateway = new Gateway({ shell, sagaRunner, sagas, credentials, ledger, effects, now, answerBudget: answerBudgetSettings(process.env) });
  openEffects.follow(options.reconcileTickMs ?? 200, (error) => logger.error({ err: { message: (error as Error).message } }, `read side: ${(error as Error).message}`));
  // One observer of the ledger: every event this instance appends is logged once, by the instance that appended it.
  shell.core.store.onAppended(logAppendedEvents(logger));
  // The read side takes this instance's own appends as they are made, not read back and decoded,
  // with the effects' states the store folded (not folded again).
  shell.core.store.onAppended((stream, events, after) => openEffects.appended(stream, after.revision - events.length + 1, events, after));
  let reconciling = false;
  return {
    gateway, shell, ledger, tools, metrics, instanceId, now, openEffects, reconcilerWorker, sagas, sagaRunner, logger,
    dataDir: options.dataDir,
    secretOrigin: origin,
    credentials,
    credentialsFile: { file: credentialSource.file, created: credentialSource.created },
    startReconciler: () => {
      const loaded = openEffects.load();
      reconcilerWorker.start();
      sagaWorker.start();
      reconciling = true;
      return loaded;
    },
    close: async () => {
      if (reconciling) await Promise.all([reconcilerWorker.stop(), sagaWorker.stop()]);
      await openEffects.unfollow();
      // Upstream MCP clients (stdio children included) end with the instance.
      await closeUpstreams();
      await ledger.close();
    },
  };
}

function positiveIntFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new EffectdError('invalid_config', `${name} must be a positive integer, not "${raw}"`);
  return value;
}
