import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Ledger } from '../ledger/ledger.port.js';
import { GroupCommitLedger } from '../ledger/group-commit-ledger.js';
import { openLedger } from '../ledger/open-ledger.js';
import { effectGauges } from '../metrics/effect-gauges.js';
import { PromMetrics } from '../metrics/prom-metrics.js';
import { loadConfig } from '../providers/config-loader.js';
import { ToolRegistry } from '../providers/tool-registry.js';
import { EffectShell, type Dispatcher } from '../shell/effect-shell.js';
import { ReconcilerWorker } from '../shell/reconciler-worker.js';
import { SagaRegistry } from '../shell/saga-registry.js';
import { SagaRunner } from '../shell/saga-runner.js';
import { SagaWorker } from '../shell/saga-worker.js';
import { sagas as builtinSagas } from '../../sagas/index.js';
import { OpenEffectsProjection } from './open-effects-projection.js';
import { tenantContentIndex } from './tenant-content-index.js';
import { EffectStatesProjection } from './effect-states-projection.js';
import { CredentialBook, loadCredentials } from './credentials.js';
import { loadSecret } from './secret.js';

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
}

/** One effectd instance's parts, wired once; transports (HTTP, Kafka, CLI) only call into it. */
export interface EffectdRuntime {
  readonly shell: EffectShell;
  readonly ledger: Ledger;
  readonly tools: ToolRegistry;
  readonly metrics: PromMetrics;
  readonly effectStates: EffectStatesProjection;
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
  /** Loads the open-effects snapshot and starts reconciling in the background; returns the snapshot's size. */
  startReconciler(): number;
  close(): Promise<void>;
}

export async function createRuntime(options: RuntimeOptions): Promise<EffectdRuntime> {
  mkdirSync(options.dataDir, { recursive: true });
  const config = loadConfig({ file: options.configFile ?? process.env.EFFECTD_CONFIG, providerUrls: options.providerUrls });
  const tools = new ToolRegistry(config);
  const { secret, origin } = loadSecret(options.dataDir);
  const credentialSource = loadCredentials(options.dataDir);
  const ledgerUrl = options.ledgerUrl ?? process.env.EFFECTD_LEDGER ?? `sqlite:${join(resolve(options.dataDir), 'ledger.db')}`;
  // Group commit: concurrent effects share durable commits (one fsync for many appends).
  const ledger = new GroupCommitLedger(await openLedger(ledgerUrl, options.dataDir));
  const metrics = new PromMetrics();
  metrics.initTools(tools.list().map((t) => t.name));
  const instanceId = options.instanceId ?? `effectd-${process.pid}-${randomUUID().slice(0, 8)}`;
  const now = options.clock ?? Date.now;
  const effectStates = new EffectStatesProjection(ledger);
  const shell = new EffectShell({
    ledger, tools, secret, instanceId, clock: now, metrics, leaseMarginMs: options.leaseMarginMs, dispatcher: options.dispatcher,
    tenantContentIndex: tenantContentIndex(effectStates, config.contentIndex.tenantWindowMs),
  });
  // The snapshot is named after the ledger it describes, so switching ledgers never mixes positions.
  const ledgerIdentity = createHash('sha256').update(ledgerUrl.replace(/\/\/[^@/]*@/, '//')).digest('hex').slice(0, 16);
  const openEffects = new OpenEffectsProjection(ledger, ledgerIdentity, join(options.dataDir, 'projections', `open-effects-${ledgerIdentity}.json`));
  const reconcilerWorker = new ReconcilerWorker(openEffects, shell.reconciler, tools, now, {
    tickMs: options.reconcileTickMs,
    onError: (error) => console.error(`effectd reconciler: ${(error as Error).message}`),
  });
  metrics.beforeScrape(async () => {
    await effectStates.refresh();
    metrics.setEffectGauges(effectGauges(effectStates.all(), now()));
  });
  const sagas = new SagaRegistry(tools).registerAvailable(builtinSagas);
  const sagaRunner = new SagaRunner(shell, sagas, metrics, config.sagas.compensationRetry);
  metrics.initSagas(sagas.names());
  const sagaWorker = new SagaWorker(openEffects, sagaRunner, options.reconcileTickMs ?? 250, (error) => console.error(`effectd saga worker: ${(error as Error).message}`));
  let reconciling = false;
  return {
    shell, ledger, tools, metrics, instanceId, now, openEffects, reconcilerWorker, sagas, sagaRunner,
    effectStates,
    dataDir: options.dataDir,
    secretOrigin: origin,
    credentials: new CredentialBook(credentialSource.credentials),
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
      await ledger.close();
    },
  };
}
