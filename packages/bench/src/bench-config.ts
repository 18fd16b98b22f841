import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../../src/config/config-loader.js';
import { packageRoot } from '../../../src/shared/package-root.js';
import { ToolRegistry } from '../../../src/providers/tool-registry.js';
import type { SimulatorKind } from '@effectd/simulators';
import type { ProviderKind } from './workloads.js';
import { CodedError } from '../../../src/shared/coded-error.js';

/**
 * Compressed time: the benchmark re-declares the built-in tools with short timeouts, settle windows
 * and (for key-expired) retentions, and gives the simulated providers matching settings, so every
 * fault plays out in well under a second — and effectd's contract agrees with the provider, as in
 * production.
 */
export const BENCH_TIMINGS = {
  timeoutMs: 400,
  settleWindowMs: 1_000,
  /**
   * A proof of absence is looked up once more this long after it (the contract's absenceAuditMs; its
   * default, 3× the window and at least the window + 10 s, would be 11 s here): 3× the window.
   */
  absenceAuditMs: 3_000,
  /** Production-like key retention (Stripe v1, Resend, EC2: 24 h). */
  longRetentionMs: 86_400_000,
  /** Production-like key retention of Stripe's v2 profile (30 days), where the others get `longRetentionMs`. */
  stripeV2RetentionMs: 2_592_000_000,
  /** key-expired cells: retention on both sides, the retry comes after it. */
  shortRetentionMs: 600,
  searchLagMs: 300,
  describeLagMs: 200,
  /** key-expired cells: lookups lag past the retention, so the key is gone while the outcome is still open. */
  keyExpiredLookupLagMs: 800,
  /**
   * retention-shorter-than-declared: the provider forgets keys after this, while the contract
   * still declares 24 h (the agent's resubmission comes 200 ms after it, ~450 ms after the first)…
   */
  lyingRetentionMs: 250,
  /**
   * …and its search lags this long: well past that resubmission (so effectd's lookup misses the
   * first charge and it resends under the key), inside the 1 s settle window the contract declares
   * (so the audit a settle window after the resend finds it).
   */
  lyingSearchLagMs: 850,
  bootMs: 100,
  /** late-commit: the provider commits this long after receipt, past the caller's timeout. */
  lateCommitMs: 620,
  /**
   * late-delivery: the request reaches the provider this long after it was sent — past the caller's
   * timeout (400 ms) plus the settle window (1 s) counted from it, when a consistent lookup proves it
   * absent (≈ 1.45 s), and past the agent's new step after that not_done (≈ 1.6–1.9 s).
   */
  lateDeliveryMs: 2_500,
  /** cancel and rebalance: the provider holds the request this long (real time) before handling it. */
  providerDelayMs: 300,
  /** cancel: the caller gives up this long after sending. */
  cancelAfterMs: 100,
  /** before-dispatch on an effectd saga: how long the tool's provider stays unreachable. */
  sagaOutageMs: 400,
  /** A compensation never sent is tried again 100, 200, 400, 400 ms later: the fourth try outlives the outage. */
  compensationRetry: { attempts: 5, firstDelayMs: 100, maxDelayMs: 400 },
} as const;

export interface BenchTool {
  provider: ProviderKind;
  /**
   * Path prefix of the tool's mutating request, where provider-side faults are aimed (specific
   * enough that another tool of the same provider never matches it before this tool's request).
   */
  mutationPath: string;
}

/**
 * The tools the benchmark drives. Each one reaches its provider through its own proxy (and its own
 * provider entry in effectd's configuration), so a fault can take one tool's provider away (the
 * hotel API is unreachable) while another tool of the same provider still answers (the flight API).
 */
export const BENCH_TOOLS: Record<string, BenchTool> = {
  'payments.charge': { provider: 'payments', mutationPath: '/v1/charges' },
  'payments.refund': { provider: 'payments', mutationPath: '/v1/refunds' },
  'payments.charge-v2': { provider: 'payments-v2', mutationPath: '/v1/charges' },
  'email.send': { provider: 'email', mutationPath: '/emails' },
  'cloud.create-instance': { provider: 'cloud', mutationPath: '/cloud/' },
  'weak.append-line': { provider: 'weak', mutationPath: '/append-line' },
  'weak.notify': { provider: 'weak', mutationPath: '/notify' },
  'weak.create-resource': { provider: 'weak', mutationPath: '/resources' },
  'travel.hold-flight': { provider: 'travel', mutationPath: '/flights/holds' },
  'travel.release-hold': { provider: 'travel', mutationPath: '/flights/holds/fh_' },
  'travel.book-hotel': { provider: 'travel', mutationPath: '/hotels/bookings' },
  'travel.cancel-booking': { provider: 'travel', mutationPath: '/hotels/bookings/hb_' },
};

export const BENCH_TOOL_NAMES = Object.keys(BENCH_TOOLS);

/** The provider entry effectd's configuration gives one tool: its own base URL (its own proxy). */
export function benchProviderName(tool: string): string {
  return `bench-${tool.replace(/[^a-z0-9]+/gi, '-')}`;
}

export function benchTool(name: string): BenchTool {
  const tool = BENCH_TOOLS[name];
  if (!tool) throw new CodedError('internal', `the benchmark has no provider route for tool ${name}`);
  return tool;
}

interface RawConfig {
  providers: Record<string, Record<string, unknown>>;
  tools: Record<string, unknown>[];
}

/**
 * An effectd configuration file's content: the built-in contracts of the benchmark's tools with
 * compressed timings, each tool pointing at its own URL in `toolUrls` (its proxy). `forBaselines`
 * strips effectd's stamped references (the baselines call providers directly and stamp nothing).
 */
export function benchConfig(toolUrls: Record<string, string>, retentionMs: number, forBaselines = false): Record<string, unknown> {
  const builtin = JSON.parse(readFileSync(join(packageRoot(), 'config', 'builtin-tools.json'), 'utf8')) as RawConfig;
  const providers: Record<string, unknown> = {};
  const tools = builtin.tools
    .filter((tool) => typeof tool.name === 'string' && tool.name in BENCH_TOOLS)
    .map((tool) => {
      const name = tool.name as string;
      const spec = builtin.providers[tool.provider as string];
      if (!spec) throw new CodedError('invalid_config', `config/builtin-tools.json: tool ${name} names provider ${String(tool.provider)}, which it does not declare`);
      providers[benchProviderName(name)] = { ...spec, baseUrl: toolUrls[name] ?? 'http://127.0.0.1:9' };
      const idempotency = tool.idempotency as { kind: string; retentionMs?: number };
      return {
        ...tool,
        provider: benchProviderName(name),
        timeoutMs: BENCH_TIMINGS.timeoutMs,
        settleWindowMs: BENCH_TIMINGS.settleWindowMs,
        absenceAuditMs: BENCH_TIMINGS.absenceAuditMs,
        idempotency: idempotency.kind === 'none' ? idempotency : { ...idempotency, retentionMs: providerRetentionMs(benchTool(name).provider, retentionMs) },
        ...(forBaselines ? { reference: { kind: 'none' } } : {}),
      };
    });
  return { builtinTools: false, builtinSagas: true, providers, tools, sagas: { compensationRetry: BENCH_TIMINGS.compensationRetry } };
}

/**
 * The benchmark's tools whose contract has no idempotency key and a consistent lookup: the ones where
 * "not found after the settle window" is a proof of absence, so a request delivered later than the
 * window (late-delivery) can arrive after effectd said not_done. A keyed tool is resent under its key
 * instead, and the late request is then deduplicated by the provider; a lookup that may lag proves nothing.
 */
export function keylessConsistentTools(): ReadonlySet<string> {
  const builtin = JSON.parse(readFileSync(join(packageRoot(), 'config', 'builtin-tools.json'), 'utf8')) as { tools: { name: string; idempotency: { kind: string }; lookup?: { consistent?: boolean } }[] };
  return new Set(builtin.tools.filter((t) => t.name in BENCH_TOOLS && t.idempotency.kind === 'none' && t.lookup?.consistent === true).map((t) => t.name));
}

/** The compiled contracts the baseline policies build their requests from (same shapes as effectd's). */
export function baselineTools(toolUrls: Record<string, string>, retentionMs: number): ToolRegistry {
  return new ToolRegistry(parseConfig(benchConfig(toolUrls, retentionMs, true), 'the benchmark configuration'));
}

/**
 * A cell's key retention as one provider keeps it (and its contract declares it): the short
 * key-expired retention everywhere; otherwise production-like, which is 30 days for Stripe v2.
 */
export function providerRetentionMs(kind: ProviderKind, retentionMs: number): number {
  return kind === 'payments-v2' && retentionMs === BENCH_TIMINGS.longRetentionMs ? BENCH_TIMINGS.stripeV2RetentionMs : retentionMs;
}

/** The simulator that plays a provider kind (`payments-v2` is the payments simulator with `apiVersion: 'v2'`). */
export function simulatorKind(kind: ProviderKind): SimulatorKind {
  return kind === 'payments-v2' ? 'payments' : kind;
}

/** The simulated providers' settings that match the contracts above. */
export function simulatorOptions(kind: ProviderKind, retentionMs: number): Record<string, unknown> {
  const shortKeys = retentionMs < BENCH_TIMINGS.keyExpiredLookupLagMs;
  switch (kind) {
    case 'payments':
      return { retentionMs, searchLagMs: shortKeys ? BENCH_TIMINGS.keyExpiredLookupLagMs : BENCH_TIMINGS.searchLagMs };
    case 'payments-v2':
      return { apiVersion: 'v2', retentionMs: providerRetentionMs(kind, retentionMs), searchLagMs: shortKeys ? BENCH_TIMINGS.keyExpiredLookupLagMs : BENCH_TIMINGS.searchLagMs };
    case 'email':
      return { retentionMs, listLagMs: 0 };
    case 'cloud':
      return { tokenLifetimeMs: retentionMs, describeLagMs: shortKeys ? BENCH_TIMINGS.keyExpiredLookupLagMs : BENCH_TIMINGS.describeLagMs, bootMs: BENCH_TIMINGS.bootMs };
    case 'weak':
      return {};
    case 'travel':
      // The travel contracts say their lookups are consistent: the simulated provider must be too.
      return { retentionMs, listLagMs: 0 };
  }
}
