import { createHash, randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { readConfigFile } from '../config/read-config-file.js';
import { loadConfig } from '../config/config-loader.js';
import type { Settings } from '../config/settings-loader.js';
import { openLedger } from '../ledger/open-ledger.js';
import { createLogger, type Logger } from '../logging/logger.js';
import type { Dispatcher } from '../shell/effect-shell.js';
import { compose, type EffectdApp } from './compose.js';
import { CredentialBook, loadCredentials } from './credentials.js';
import { ensurePrivateDir } from './private-files.js';
import { loadSecret } from './secret.js';

export interface RuntimeOptions {
  dataDir: string;
  /** The settings the CLI loaded (src/config/settings-loader.ts); the runtime reads no environment. */
  settings: Settings;
  /** `sqlite:[path]` (default) or `postgres://…`; settings.ledger.url when not given. */
  ledgerUrl?: string;
  configFile?: string;
  providerUrls?: Record<string, string>;
  instanceId?: string;
  leaseMarginMs?: number;
  clock?: () => number;
  dispatcher?: Dispatcher;
  /** How often the reconciler looks at open effects (default 200 ms). */
  reconcileTickMs?: number;
  /** Effects held in cached workflow states (default: settings.workflowCacheEffects). */
  workflowCacheEffects?: number;
  /** Effects in the read side's recent window (default: settings.recentEffects). */
  recentEffects?: number;
  /** Where the ledger's notable events and the runtime's faults are logged (default: stderr, settings.log or warn). */
  logger?: Logger;
}

/** One effectd instance: the composed application, with where its files live. */
export interface EffectdRuntime extends EffectdApp {
  readonly dataDir: string;
  readonly secretOrigin: string;
  /** Where the credentials live, and whether this start created them. */
  readonly credentialsFile: { file: string; created: boolean };
}

/** The real service's adapters (the data directory's secret, credentials and ledger), composed. */
export async function createRuntime(options: RuntimeOptions): Promise<EffectdRuntime> {
  // 0700, files 0600 (the ledger, the snapshot, the secret, the credentials): see private-files.ts.
  ensurePrivateDir(options.dataDir);
  const logger = options.logger ?? createLogger({ fd: 2, log: options.settings.log, defaultLevel: 'warn' });
  ensurePrivateDir(join(options.dataDir, 'projections'));
  const configFile = options.configFile ?? options.settings.configFile;
  const config = loadConfig({ providerUrlVariables: options.settings.providerUrls, user: configFile ? await readConfigFile(configFile) : undefined, providerUrls: options.providerUrls, onOverride: (line) => logger.info({ event: 'ProviderOverride' }, `config: ${line}`) });
  const { secret, origin } = loadSecret(options.dataDir, options.settings.secret);
  const credentialSource = loadCredentials(options.dataDir, options.settings.credentialsFile);
  const ledgerUrl = options.ledgerUrl ?? options.settings.ledger.url ?? `sqlite:${join(resolve(options.dataDir), 'ledger.db')}`;
  const ledger = await openLedger(ledgerUrl, options.dataDir, { encoding: options.settings.ledger.encoding, compression: options.settings.ledger.compression, timeouts: options.settings.ledger.timeouts });
  // The snapshot is named after the ledger it describes, so switching ledgers never mixes positions.
  const ledgerIdentity = createHash('sha256').update(ledgerUrl.replace(/\/\/[^@/]*@/, '//')).digest('hex').slice(0, 16);
  const app = compose(
    {
      config,
      instanceId: options.instanceId ?? `effectd-${process.pid}-${randomUUID().slice(0, 8)}`,
      ledgerIdentity,
      answerBudget: options.settings.answerBudget,
      workflowCacheEffects: options.workflowCacheEffects ?? options.settings.workflowCacheEffects,
      recentEffects: options.recentEffects ?? options.settings.recentEffects,
      ...(options.reconcileTickMs !== undefined ? { reconcileTickMs: options.reconcileTickMs } : {}),
      ...(options.leaseMarginMs !== undefined ? { leaseMarginMs: options.leaseMarginMs } : {}),
    },
    {
      ledger, secret, logger,
      credentials: new CredentialBook(credentialSource.credentials),
      snapshotFile: join(options.dataDir, 'projections', `open-effects-${ledgerIdentity}.json`),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    },
  );
  return Object.assign(app, { dataDir: options.dataDir, secretOrigin: origin, credentialsFile: { file: credentialSource.file, created: credentialSource.created } });
}
