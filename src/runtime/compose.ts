import type { ResolvedConfig } from '../config/config-loader.js';
import type { AnswerBudgetSettings } from '../core/answer-budget.js';
import { Gateway, type EffectIndex } from '../gateway/gateway.js';
import { ListCursors } from '../gateway/views/list-cursors.js';
import type { Ledger } from '../ledger/ledger.port.js';
import { GroupCommitLedger } from '../ledger/group-commit-ledger.js';
import { watchWrites, WriteWatchedLedger, type WriteHealthReport } from '../ledger/write-health.js';
import { ledgerWritesChanged } from './ledger-writes-log.js';
import { logAppendedEvents } from '../logging/event-log.js';
import type { Logger } from '../logging/logger.js';
import { effectGauges } from '../metrics/effect-gauges.js';
import { PromMetrics } from '../metrics/prom-metrics.js';
import { closeUpstreams } from '../providers/mcp-provider.js';
import { ToolRegistry } from '../providers/tool-registry.js';
import { EffectShell, type Dispatcher, type Looker } from '../shell/effect-shell.js';
import { ReconcilerWorker } from '../shell/reconciler-worker.js';
import type { SagaRegistry } from '../shell/saga-registry.js';
import { SagaRunner } from '../shell/saga-runner.js';
import { SagaWorker } from '../shell/saga-worker.js';
import { configuredSagas } from './configured-sagas.js';
import type { CredentialBook } from './credentials.js';
import { OpenEffectsProjection } from './open-effects-projection.js';
import { tenantContentIndex, tenantWindowOn } from './tenant-content-index.js';

/** What an application is built from that touches the world: each one replaceable (tests pass in-memory ones). */
export interface Adapters {
  /** The event store, opened (compose adds group commit on top). */
  ledger: Ledger;
  /** The instance secret provider keys are derived from. */
  secret: Buffer;
  credentials: CredentialBook;
  logger: Logger;
  clock?: () => number;
  /** How a provider is called and asked (default: the tool's HTTP or MCP provider). */
  dispatcher?: Dispatcher;
  looker?: Looker;
  /** Where the read side keeps its snapshot between starts (none: it rebuilds from the ledger). */
  snapshotFile?: string;
}

/** The application's settings, already read and checked (src/config). */
export interface AppSettings {
  config: ResolvedConfig;
  instanceId: string;
  /** Names the ledger in the read side's snapshot, so switching ledgers never mixes positions. */
  ledgerIdentity: string;
  answerBudget: AnswerBudgetSettings;
  /** Effects held in cached workflow states. */
  workflowCacheEffects: number;
  /** Effects in the read side's recent window. */
  recentEffects: number;
  /** How often the reconciler looks at open effects (default 200 ms). */
  reconcileTickMs?: number;
  leaseMarginMs?: number;
}

/** Whether this instance can serve: the ledger answers. */
export interface Health {
  readonly instanceId: string;
  readonly ledgerKind: string;
  ledgerReachable(): Promise<boolean>;
  /** Whether the ledger accepts writes now (src/ledger/write-health.ts). */
  ledgerWrites(): Promise<WriteHealthReport>;
}

/** A stream nobody writes: reading it asks the ledger for nothing but an answer. */
const HEALTH_PROBE_STREAM = 'effectd-health-probe';
/** How slow the background loops get while the ledger is quiet: how late an idle instance sees another instance's writes. */
const IDLE_POLL_MS = 1_000;

/** One effectd application, composed once: every door (HTTP, Kafka, MCP, CLI) only calls into it. */
export interface EffectdApp {
  /** Commands and views: the application layer every door calls. */
  readonly gateway: Gateway;
  /** The catalog: tools and sagas this instance offers. */
  readonly tools: ToolRegistry;
  readonly sagas: SagaRegistry;
  readonly health: Health;
  readonly metrics: PromMetrics;
  readonly logger: Logger;
  readonly credentials: CredentialBook;
  readonly instanceId: string;
  readonly now: () => number;
  /** Below the gateway, for operators' tools and tests that look at what was recorded. */
  readonly ledger: Ledger;
  readonly shell: EffectShell;
  readonly openEffects: OpenEffectsProjection;
  readonly reconcilerWorker: ReconcilerWorker;
  readonly sagaRunner: SagaRunner;
  /** Loads the read side's snapshot and starts the background workers (reconciler, sagas); returns the snapshot's size. */
  startReconciler(): number;
  close(): Promise<void>;
}

/** The composition root: builds the application from settings and adapters (no environment, no files). */
export function compose(settings: AppSettings, adapters: Adapters): EffectdApp {
  const { config, instanceId } = settings;
  const { logger, credentials } = adapters;
  const logError = (what: string) => (error: unknown) => logger.error({ err: { message: (error as Error).message } }, `${what}: ${(error as Error).message}`);
  const tools = new ToolRegistry(config);
  // Whether the ledger accepts writes (the last append's outcome and a probe): /readyz, /healthz, and a log line when it changes.
  const writes = new WriteWatchedLedger(adapters.ledger, { onChange: ledgerWritesChanged(logger) });
  const writeWatch = watchWrites(writes, 5_000);
  // Group commit: concurrent effects share durable commits (one fsync for many appends).
  const ledger = new GroupCommitLedger(writes);
  const metrics = new PromMetrics();
  metrics.initTools(tools.list().map((t) => t.name));
  const now = adapters.clock ?? Date.now;
  // The content index across workflows is kept only for a tenant content window, its one reader.
  const openEffects = new OpenEffectsProjection(ledger, settings.ledgerIdentity, adapters.snapshotFile, settings.recentEffects, tenantWindowOn(config.contentIndex.tenantWindowMs));
  const shell = new EffectShell({
    ledger, tools, secret: adapters.secret, instanceId, clock: now, metrics, leaseMarginMs: settings.leaseMarginMs,
    ...(adapters.dispatcher ? { dispatcher: adapters.dispatcher } : {}),
    ...(adapters.looker ? { looker: adapters.looker } : {}),
    tenantContentIndex: tenantContentIndex(openEffects, config.contentIndex.tenantWindowMs),
    maxCachedEffects: settings.workflowCacheEffects,
    onError: (what, error) => logError(what)(error),
  });
  const tickMs = settings.reconcileTickMs;
  // While nothing is open and nothing is written, the background loops poll the ledger at most once a second.
  const idleMs = Math.max(tickMs ?? 0, IDLE_POLL_MS);
  const reconcilerWorker = new ReconcilerWorker(openEffects, shell.runner, now, { tickMs, idleTickMs: idleMs, onError: logError('reconciler') });
  // A scrape reads no ledger: the read side follows it in the background.
  metrics.beforeScrape(async () => {
    await openEffects.fresh();
    metrics.setEffectGauges(effectGauges(openEffects.list().map((e) => e.state), now(), openEffects.settledCounts()));
    metrics.setWorkflowCache(shell.core.store.stats());
  });
  const sagas = configuredSagas(config, tools);
  const sagaRunner = new SagaRunner(shell, sagas, metrics, config.sagas.compensationRetry);
  metrics.initSagas(sagas.names());
  const sagaWorker = new SagaWorker(openEffects, sagaRunner, { everyMs: tickMs ?? 250, idleMs }, logError('saga worker'));
  const effects: EffectIndex = {
    recentLimit: settings.recentEffects,
    async locate(effectId) {
      return openEffects.get(effectId)?.stream ?? (await ledger.locateEffect?.(effectId));
    },
    fresh: () => openEffects.fresh(),
    open: () => openEffects.list().map((e) => e.state),
    recent: () => [...openEffects.recent()].map((e) => e.state),
    known: (effectId) => openEffects.get(effectId)?.state,
  };
  // List cursors are sealed with a key derived from the instance secret: a forged one is refused.
  const gateway = new Gateway({ shell, sagaRunner, sagas, credentials, ledger, effects, now, answerBudget: settings.answerBudget, cursors: new ListCursors(adapters.secret) });
  const health: Health = {
    instanceId,
    ledgerKind: ledger.kind,
    ledgerWrites: () => writes.check(),
    async ledgerReachable() {
      try {
        await ledger.readStream(HEALTH_PROBE_STREAM);
        return true;
      } catch {
        return false;
      }
    },
  };
  openEffects.follow({ everyMs: tickMs ?? 200, idleMs }, logError('read side'));
  // One observer of the ledger: every event this instance appends is logged once, by the instance that appended it.
  shell.core.store.onAppended(logAppendedEvents(logger));
  // The read side takes this instance's own appends as they are made, not read back and decoded,
  // with the effects' states the store folded (not folded again).
  shell.core.store.onAppended((stream, events, after) => openEffects.appended(stream, after.revision - events.length + 1, events, after));
  // What this instance writes may open an effect or a saga: slowed loops come back to their tick.
  shell.core.store.onAppended(() => {
    openEffects.wake();
    reconcilerWorker.wake();
    sagaWorker.wake();
  });
  let reconciling = false;
  return {
    gateway, tools, sagas, health, metrics, logger, credentials, instanceId, now, ledger, shell, openEffects, reconcilerWorker, sagaRunner,
    startReconciler: () => {
      const loaded = openEffects.load();
      reconcilerWorker.start();
      sagaWorker.start();
      reconciling = true;
      return loaded;
    },
    close: async () => {
      writeWatch.stop();
      if (reconciling) await Promise.all([reconcilerWorker.stop(), sagaWorker.stop()]);
      await openEffects.unfollow();
      // Upstream MCP clients (stdio children included) end with the instance.
      await closeUpstreams();
      await ledger.close();
    },
  };
}
