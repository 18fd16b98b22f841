import { parseArgs } from 'node:util';
import { isSimulatorKind, SIMULATOR_KINDS, type SimulatorKind, type SimulatorOptionsByKind } from './simulator-kinds.js';
import type { StartOptions } from './server.js';
import { CodedError } from './coded-error.js';

export const USAGE = `Usage: effectd-simulator <kind> [options]

Runs one simulated provider as an HTTP server and prints one JSON line
{"ready":true,"kind":...,"url":...} on stdout once it listens. SIGTERM stops it.

Kinds: ${SIMULATOR_KINDS.join(', ')}

Options:
  --port N                listen port (default 0: a free one)
  --host H                listen address (default 127.0.0.1)
  --seed N                stamped into ids so runs are reproducible (default 0)
  --retention-ms N        key retention: payments/email/travel idempotency keys, cloud client tokens (default 24 h)
  --search-lag-ms N       lookup lag: payments search (default 1000), cloud describe (500), email/travel list (0)
  --token-lifetime-ms N   cloud only; overrides --retention-ms
  --describe-lag-ms N     cloud only; overrides --search-lag-ms
  --list-lag-ms N         email and travel only; overrides --search-lag-ms
  --boot-ms N             cloud only: how long an instance stays 'pending' (default 1000)
  --stripe-should-retry   payments only: send Stripe-Should-Retry headers
  --api-version v1|v2     payments only: Stripe's idempotency profile (default v1: the first
                          response is frozen, a 500 included; v2: a failed request is executed
                          again on a same-key retry, and keys are kept 30 days by default)
  --data-dir D            weak only: where append-line journals are written (default a temp dir)
  --help                  print this text`;

export type MainArgs = { help: true } | { help: false; kind: SimulatorKind; start: StartOptions<SimulatorKind> };

const NUMERIC = ['port', 'seed', 'retention-ms', 'search-lag-ms', 'token-lifetime-ms', 'describe-lag-ms', 'list-lag-ms', 'boot-ms'] as const;

/** Throws an Error with a usage-worthy message on bad input. */
export function parseMainArgs(argv: string[]): MainArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'stripe-should-retry': { type: 'boolean' },
      'api-version': { type: 'string' },
      ...Object.fromEntries(NUMERIC.map((name) => [name, { type: 'string' as const }])),
    },
  });
  if (values.help === true) return { help: true };
  const [kind, ...extra] = positionals;
  if (kind === undefined || !isSimulatorKind(kind)) throw new CodedError('invalid_command', `Expected a kind (${SIMULATOR_KINDS.join(', ')}), got ${kind ?? 'nothing'}.`);
  if (extra.length > 0) throw new CodedError('invalid_command', `Unexpected arguments: ${extra.join(' ')}`);
  const num = (name: (typeof NUMERIC)[number]): number | undefined => {
    const text = (values as Record<string, unknown>)[name] as string | undefined;
    if (text === undefined) return undefined;
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new CodedError('invalid_command', `--${name} needs a number >= 0, got ${text}.`);
    return n;
  };
  const apiVersion = values['api-version'] as string | undefined;
  if (apiVersion !== undefined && apiVersion !== 'v1' && apiVersion !== 'v2') throw new CodedError('invalid_command', `--api-version takes v1 or v2, got ${apiVersion}.`);
  if (apiVersion !== undefined && kind !== 'payments') throw new CodedError('invalid_command', `--api-version is for payments only, not ${kind}.`);
  const byKind: SimulatorOptionsByKind = {
    payments: {
      ...(apiVersion !== undefined ? { apiVersion } : {}),
      retentionMs: num('retention-ms'),
      searchLagMs: num('search-lag-ms'),
      stripeShouldRetry: values['stripe-should-retry'] as boolean | undefined,
    },
    cloud: {
      tokenLifetimeMs: num('token-lifetime-ms') ?? num('retention-ms'),
      describeLagMs: num('describe-lag-ms') ?? num('search-lag-ms'),
      bootMs: num('boot-ms'),
    },
    email: { retentionMs: num('retention-ms'), listLagMs: num('list-lag-ms') ?? num('search-lag-ms') },
    weak: { dataDir: values['data-dir'] as string | undefined },
    travel: { retentionMs: num('retention-ms'), listLagMs: num('list-lag-ms') ?? num('search-lag-ms') },
  };
  return {
    help: false,
    kind,
    start: { port: num('port'), host: values.host as string | undefined, seed: num('seed'), options: byKind[kind] },
  };
}
