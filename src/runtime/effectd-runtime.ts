import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Ledger } from '../ledger/ledger.port.js';
import { openLedger } from '../ledger/open-ledger.js';
import { PromMetrics } from '../metrics/prom-metrics.js';
import { loadConfig } from '../providers/config-loader.js';
import { ToolRegistry } from '../providers/tool-registry.js';
import { EffectShell, type Dispatcher } from '../shell/effect-shell.js';
import { EffectStatesProjection } from './effect-states-projection.js';
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
  readonly now: () => number;
  close(): Promise<void>;
}

export async function createRuntime(options: RuntimeOptions): Promise<EffectdRuntime> {
  mkdirSync(options.dataDir, { recursive: true });
  const config = loadConfig({ file: options.configFile ?? process.env.EFFECTD_CONFIG, providerUrls: options.providerUrls });
  const tools = new ToolRegistry(config);
  const { secret, origin } = loadSecret(options.dataDir);
  const ledger = await openLedger(options.ledgerUrl ?? process.env.EFFECTD_LEDGER, options.dataDir);
  const metrics = new PromMetrics();
  const instanceId = options.instanceId ?? `effectd-${process.pid}-${randomUUID().slice(0, 8)}`;
  const now = options.clock ?? Date.now;
  const shell = new EffectShell({ ledger, tools, secret, instanceId, clock: now, metrics, leaseMarginMs: options.leaseMarginMs, dispatcher: options.dispatcher });
  return {
    shell, ledger, tools, metrics, instanceId, now,
    effectStates: new EffectStatesProjection(ledger),
    dataDir: options.dataDir,
    secretOrigin: origin,
    close: () => ledger.close(),
  };
}
