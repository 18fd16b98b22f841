import type { CommandSpec } from './cli-kit.js';

/**
 * The flags of `effectd bench`. The benchmark itself is the private workspace packages/bench (its
 * command, with the help of each flag, is packages/bench/src/command.ts); the service declares the
 * flags so that an installation without the benchmark parses any of them and answers how to get it
 * (src/cli/bench.command.ts) rather than "unknown option".
 */
export const BENCH_FLAGS: CommandSpec['options'] = {
  quick: { type: 'boolean' },
  limbo: { type: 'boolean' },
  mcp: { type: 'boolean' },
  lane: { type: 'string' },
  workload: { type: 'string' },
  fault: { type: 'string' },
  policy: { type: 'string' },
  seeds: { type: 'string' },
  json: { type: 'string' },
  svg: { type: 'string' },
  concurrency: { type: 'string' },
  ledger: { type: 'string' },
  redecide: { type: 'string' },
  'fail-at': { type: 'string' },
  kafka: { type: 'string' },
  'no-kafka': { type: 'boolean' },
  lanes: { type: 'string' },
  verbose: { type: 'boolean' },
};
