import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../../src/shared/package-root.js';

/** A user config that re-declares only payments.charge (no lookup), with the given timeout: for tests and benchmarks that wait out leases. */
export function writeFastPaymentsConfig(dir: string, paymentsUrl: string, timeoutMs: number): string {
  const file = join(dir, 'effectd.config.json');
  writeFileSync(file, JSON.stringify({
    builtinTools: false,
    providers: { payments: { baseUrl: paymentsUrl } },
    tools: [{
      name: 'payments.charge', provider: 'payments',
      request: { path: '/v1/charges', body: { amount: '{args.amount}', currency: '{args.currency}', metadata: { invoice_id: '{args.invoiceId}' } } },
      args: { invoiceId: { type: 'string' }, amount: { type: 'money', currencyField: 'currency' }, currency: { type: 'currency', default: 'usd' } },
      target: 'invoice {args.invoiceId}', reversibility: 'compensable',
      idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 86_400_000 },
      reference: { kind: 'body-path', path: 'metadata.effectd_ref' },
      receiptPath: 'id', replayHeader: 'Idempotent-Replayed', timeoutMs,
    }],
  }));
  return file;
}

/**
 * A config file with the built-in tools re-declared (builtinTools: false) against the given
 * providers, with per-tool overrides (short timeouts, settle windows, retentions) for fast tests;
 * the built-in sagas run on them (builtinSagas: true).
 */
export function writeToolsConfig(dir: string, providerUrls: Record<string, string>, overrides: Record<string, Record<string, unknown>> = {}): string {
  const builtin = JSON.parse(readFileSync(join(packageRoot(), 'config', 'builtin-tools.json'), 'utf8')) as { providers: Record<string, { baseUrl: string }>; tools: { name: string; provider: string }[] };
  const providers = Object.fromEntries(Object.entries(builtin.providers).map(([name, p]) => [name, { ...p, baseUrl: providerUrls[name] ?? p.baseUrl }]));
  const tools = builtin.tools.map((tool) => deepMerge(tool, overrides[tool.name] ?? {}));
  const file = join(dir, `effectd.config.${Date.now()}.${Math.random().toString(36).slice(2, 6)}.json`);
  writeFileSync(file, JSON.stringify({ builtinTools: false, builtinSagas: true, providers, tools }));
  return file;
}

function deepMerge<T>(base: T, patch: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key];
    out[key] = value && typeof value === 'object' && !Array.isArray(value) && current && typeof current === 'object' ? deepMerge(current, value as Record<string, unknown>) : value;
  }
  return out as T;
}
