import { parseArgs } from 'node:util';

export type Ingress = 'direct' | 'http' | 'kafka' | 'dbos';
const INGRESSES: readonly Ingress[] = ['direct', 'http', 'kafka', 'dbos'];

/** Worker processes per instance, and how the cluster hands them connections: rr (Node's round robin, its Linux default) or none (the kernel's accept). */
export interface WorkersSpec {
  count: number;
  sched: 'rr' | 'none';
}

export interface BenchOptions {
  effects: number;
  warmup: number;
  reps: number;
  concurrency: number[];
  /** Ingresses measured; `direct` (a POST straight to the provider) is always among them: it is what added latency is measured against. */
  ingresses: Ingress[];
  /** effectd fleets: 1 = one instance, 2 = two instances sharing the ledger and the consumer group. */
  instances: number[];
  /** Worker processes per effectd instance (`effectd start --workers N`, node:cluster on one port); 1 = no cluster. */
  workers: WorkersSpec[];
  pgUrl: string;
  brokers: string[];
  /** Directory for `node --cpu-prof` of every effectd process (written when it exits). */
  profileDir?: string;
  /** Another effectd checkout (built), measured in the same run as build "baseline": before/after ratios. */
  baseline?: string;
  out?: string;
  /** Seconds of no load over which an idle instance's CPU (and the broker's idle requests) are measured. */
  idleSeconds: number;
}

export const USAGE = `Usage: npm run bench:throughput -- [options]
  --effects N          measured effects per lane and rep (default 2000)
  --warmup N           effects per lane before the first rep, at least 16 at a time (default 2000: V8 needs some
                       10,000 effects to finish optimising effectd; a c=1 lane measured after 200 measured it compiling)
  --reps R             repetitions, interleaved: rep 1 of every lane, then rep 2… (default 3)
  --concurrency LIST   closed-loop callers, e.g. 1,16,64 (default)
  --ingress LIST       direct,http,kafka,dbos (default all; direct is always measured; dbos = the same charge as a
                       one-step DBOS Transact workflow behind HTTP, on the same PostgreSQL server: the system users would pick instead)
  --instances LIST     effectd fleets to measure, e.g. 1,2 (default 1)
  --workers LIST       worker processes per instance (effectd start --workers N), e.g. 1,2 (default 1); lanes with
                       N > 1 are build "this-wN" (the baseline is measured with 1 only)
  --sched LIST         with --workers N > 1: rr (round robin, Node's Linux default) and/or none (the kernel's accept,
                       NODE_CLUSTER_SCHED_POLICY=none; build "this-wNnone"), default rr
  --quick              a check that it works: --effects 200 --warmup 50 --reps 1 --concurrency 1,16
  --profile DIR        run every effectd process under node --cpu-prof, profiles in DIR (see packages/bench/src/profile-summary.ts)
  --baseline DIR       also measure the effectd built in DIR (another checkout, npm run build done there), lanes
                       interleaved with this one's, and print this/baseline ratios
  --pg URL             PostgreSQL server (default EFFECTD_TEST_PG_URL or postgres://effectd:effectd@127.0.0.1:5432/effectd_test);
                       the bench works in its own database effectd_bench on that server when the role may create it
  --kafka BROKERS      default EFFECTD_KAFKA_BROKERS or 127.0.0.1:9092
  --idle-seconds N     seconds with no load over which an idle instance's CPU is measured, after the warm-up (default 5)
  --out FILE           JSON result (default bench-results/throughput-<run>.json)`;

function positiveInts(flag: string, raw: string): number[] {
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`${flag} wants positive integers separated by commas, not "${raw}"`);
  return list;
}

function workerSpecs(workers: string | undefined, sched: string | undefined): WorkersSpec[] {
  const counts = workers === undefined ? [1] : positiveInts('--workers', workers);
  const policies = (sched ?? 'rr').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = policies.filter((p) => p !== 'rr' && p !== 'none');
  if (policies.length === 0 || unknown.length > 0) throw new Error(`--sched knows rr and none, not "${sched}"`);
  return counts.flatMap((count) => (count === 1 ? [{ count, sched: 'rr' as const }] : policies.map((p) => ({ count, sched: p as WorkersSpec['sched'] }))));
}

/** The command line, checked: a bad value is refused with what was expected. Answers undefined for --help. */
export function parseBenchOptions(argv: string[]): BenchOptions | undefined {
  const { values } = parseArgs({ args: argv, strict: true, options: {
    effects: { type: 'string' }, warmup: { type: 'string' }, reps: { type: 'string' }, concurrency: { type: 'string' },
    ingress: { type: 'string' }, instances: { type: 'string' }, workers: { type: 'string' }, sched: { type: 'string' }, quick: { type: 'boolean' }, profile: { type: 'string' },
    pg: { type: 'string' }, kafka: { type: 'string' }, baseline: { type: 'string' }, out: { type: 'string' }, 'idle-seconds': { type: 'string' }, help: { type: 'boolean', short: 'h' },
  } });
  if (values.help) return undefined;
  const quick = values.quick === true;
  const one = (flag: string, raw: string | undefined, fallback: number) => (raw === undefined ? fallback : positiveInts(flag, raw)[0]!);
  const ingresses = values.ingress === undefined ? [...INGRESSES] : values.ingress.split(',').map((s) => s.trim());
  const unknown = ingresses.filter((i) => !INGRESSES.includes(i as Ingress));
  if (unknown.length > 0) throw new Error(`--ingress knows ${INGRESSES.join(', ')}, not ${unknown.join(', ')}`);
  return {
    effects: one('--effects', values.effects, quick ? 200 : 2000),
    warmup: values.warmup === '0' ? 0 : one('--warmup', values.warmup, quick ? 50 : 2_000),
    reps: one('--reps', values.reps, quick ? 1 : 3),
    concurrency: values.concurrency === undefined ? (quick ? [1, 16] : [1, 16, 64]) : positiveInts('--concurrency', values.concurrency),
    ingresses: [...new Set<Ingress>(['direct', ...(ingresses as Ingress[])])],
    instances: values.instances === undefined ? [1] : positiveInts('--instances', values.instances),
    workers: workerSpecs(values.workers, values.sched),
    pgUrl: values.pg ?? process.env.EFFECTD_TEST_PG_URL ?? 'postgres://effectd:effectd@127.0.0.1:5432/effectd_test',
    brokers: (values.kafka ?? process.env.EFFECTD_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    ...(values.profile ? { profileDir: values.profile } : {}),
    ...(values.baseline ? { baseline: values.baseline } : {}),
    ...(values.out ? { out: values.out } : {}),
    idleSeconds: one('--idle-seconds', values['idle-seconds'], quick ? 2 : 5),
  };
}
