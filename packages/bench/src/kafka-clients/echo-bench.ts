/**
 * Kafka clients compared on a bare round trip (issue 31, item 3): for each client, `concurrency`
 * closed-loop callers publish to a 6-partition topic, an echo group member answers on a reply topic
 * and commits every 200 ms, the callers read the answers. Clients run interleaved (rep, then
 * concurrency, then client), each cell on fresh topics. Reports round trips/s, p50/p99 and CPU ms per
 * round trip of the echo, the callers and the broker (/proc), with the load average.
 *
 *   node packages/bench/dist/packages/bench/src/kafka-clients/echo-bench.js \
 *     [--clients kafkajs,platformatic,confluent] [--concurrency 16,64] [--reps 3] [--round-trips 4000] [--warmup 1000]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { CodedError } from '../../../../src/shared/coded-error.js';
import { findProcess, listeningPid, processCpuMs } from '../throughput/proc-cpu.js';
import { CLIENT_NAMES, type ClientName } from './bench-client.js';
import { runCallers, runEcho, type RoleMessage } from './echo-roles.js';

interface Cell {
  client: ClientName;
  concurrency: number;
  rep: number;
  perSecond: number;
  p50: number;
  p99: number;
  cpuPerRoundTrip: { echo: number; callers: number; broker: number };
  load: string;
}

const BROKERS = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const PARTITIONS = 6;

async function main(): Promise<void> {
  const [role, ...rest] = process.argv.slice(2);
  if (role === 'echo' || role === 'callers') return runRole(role, rest);
  const { values } = parseArgs({
    options: {
      clients: { type: 'string', default: CLIENT_NAMES.join(',') },
      concurrency: { type: 'string', default: '16,64' },
      reps: { type: 'string', default: '3' },
      'round-trips': { type: 'string', default: '4000' },
      warmup: { type: 'string', default: '1000' },
    },
  });
  const clients = values.clients.split(',').map((c) => c.trim() as ClientName);
  for (const c of clients) if (!CLIENT_NAMES.includes(c)) throw new CodedError('invalid_config', `unknown client ${c} (one of ${CLIENT_NAMES.join(', ')})`);
  const concurrencies = values.concurrency.split(',').map(Number);
  const broker = brokerPid();
  const admin = new Kafka({ clientId: 'echo-bench-admin', brokers: BROKERS, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const cells: Cell[] = [];
  try {
    for (let rep = 1; rep <= Number(values.reps); rep++) {
      for (const concurrency of concurrencies) {
        for (const client of clients) {
          const tag = `${client}-${concurrency}-${rep}-${randomBytes(3).toString('hex')}`;
          const topics = { requests: `echo-bench.requests.${tag}`, replies: `echo-bench.replies.${tag}` };
          try {
            await createTopics(admin, [topics.requests, topics.replies]);
            const cell = await runCell({ client, concurrency, rep, tag, ...topics, broker, roundTrips: Number(values['round-trips']), warmup: Number(values.warmup) });
            cells.push(cell);
            console.log(row(cell));
          } catch (error) {
            console.log(`${client} c=${concurrency} rep ${rep}: failed: ${(error as Error).message}`);
          } finally {
            await admin.deleteTopics({ topics: [topics.requests, topics.replies] }).catch(() => undefined);
          }
        }
      }
    }
  } finally {
    await admin.disconnect();
  }
  console.log('\nmedian of the reps:');
  for (const concurrency of concurrencies) {
    for (const client of clients) {
      const mine = cells.filter((c) => c.client === client && c.concurrency === concurrency);
      if (mine.length === 0) continue;
      const med = (f: (c: Cell) => number) => median(mine.map(f));
      console.log(row({ client, concurrency, rep: 0, perSecond: med((c) => c.perSecond), p50: med((c) => c.p50), p99: med((c) => c.p99), cpuPerRoundTrip: { echo: med((c) => c.cpuPerRoundTrip.echo), callers: med((c) => c.cpuPerRoundTrip.callers), broker: med((c) => c.cpuPerRoundTrip.broker) }, load: mine.map((c) => c.load).join(' | ') }));
    }
  }
}

async function runCell(o: { client: ClientName; concurrency: number; rep: number; tag: string; requests: string; replies: string; broker: number; roundTrips: number; warmup: number }): Promise<Cell> {
  const common = [o.client, BROKERS.join(','), o.requests, o.replies, o.tag];
  const echo = await start(['echo', ...common]);
  const callers = await start(['callers', ...common, String(o.concurrency)]).catch(async (error: unknown) => {
    await stop(echo.child);
    throw error;
  });
  try {
    await callers.phase(o.warmup);
    const before = { echo: cpu(echo.child), callers: cpu(callers.child), broker: processCpuMs(o.broker) ?? 0 };
    const done = await callers.phase(o.roundTrips);
    const after = { echo: cpu(echo.child), callers: cpu(callers.child), broker: processCpuMs(o.broker) ?? 0 };
    const sorted = [...done.latenciesMs].sort((a, b) => a - b);
    const per = (key: keyof typeof before) => (after[key] - before[key]) / done.roundTrips;
    return {
      client: o.client, concurrency: o.concurrency, rep: o.rep,
      perSecond: (done.roundTrips * 1000) / done.elapsedMs,
      p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99),
      cpuPerRoundTrip: { echo: per('echo'), callers: per('callers'), broker: per('broker') },
      load: loadavg().map((l) => l.toFixed(2)).join(' '),
    };
  } finally {
    await Promise.all([stop(callers.child), stop(echo.child)]);
  }
}

/** The broker sometimes answers a fresh topic's metadata with UNKNOWN_TOPIC_OR_PARTITION for a moment. */
async function createTopics(admin: Admin, names: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.createTopics({ waitForLeaders: true, topics: names.map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: 1 })) });
      return;
    } catch (error) {
      if (attempt === 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

interface Role {
  child: ChildProcess;
  phase(roundTrips: number): Promise<Extract<RoleMessage, { kind: 'phase-done' }>>;
}

function start(args: string[]): Promise<Role> {
  const child = fork(fileURLToPath(import.meta.url), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let waiting: { resolve(message: RoleMessage): void; reject(error: Error): void } | undefined;
  const next = () => new Promise<RoleMessage>((resolve, reject) => (waiting = { resolve, reject }));
  child.on('message', (message: RoleMessage) => {
    if (message.kind === 'failed') waiting?.reject(new Error(`${args[0]}: ${message.error}`));
    else waiting?.resolve(message);
  });
  child.on('exit', (code) => waiting?.reject(new Error(`${args[0]} exited (${code})`)));
  const ready = withTimeout(next(), 60_000, `${args[0]} not ready within 60 s`);
  return ready.then(() => ({
    child,
    phase: async (roundTrips: number) => {
      const done = next();
      child.send({ kind: 'phase', roundTrips });
      return (await withTimeout(done, 120_000, `phase of ${roundTrips} not done within 120 s`)) as Extract<RoleMessage, { kind: 'phase-done' }>;
    },
  }));
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send({ kind: 'stop' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function runRole(role: 'echo' | 'callers', [client, brokers, requests, replies, tag, concurrency]: string[]): Promise<void> {
  const args = { client: client as ClientName, brokers: brokers!.split(','), requests: requests!, replies: replies!, tag: tag! };
  const run = role === 'echo' ? runEcho(args) : runCallers({ ...args, concurrency: Number(concurrency) });
  return run.catch((error: unknown) => {
    process.send!({ kind: 'failed', error: String(error) } satisfies RoleMessage);
    process.exit(1);
  });
}

/** The broker behind KAFKA_BROKERS (the process listening on its first address's port). */
function brokerPid(): number {
  const pid = listeningPid(Number(BROKERS[0]!.split(':').pop())) ?? findProcess('kafka.Kafka');
  if (pid === undefined) throw new CodedError('unavailable', `no broker process found listening on ${BROKERS[0]}`);
  return pid;
}

function cpu(child: ChildProcess): number {
  return processCpuMs(child.pid!) ?? Number.NaN;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() => clearTimeout(timer));
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function row(c: Cell): string {
  const rep = c.rep === 0 ? 'median' : `rep ${c.rep}`;
  return `${c.client.padEnd(12)} c=${String(c.concurrency).padEnd(3)} ${rep.padEnd(7)} ${c.perSecond.toFixed(0).padStart(6)} rt/s  p50 ${c.p50.toFixed(1)} ms  p99 ${c.p99.toFixed(1)} ms  CPU ms/rt echo ${c.cpuPerRoundTrip.echo.toFixed(3)} callers ${c.cpuPerRoundTrip.callers.toFixed(3)} broker ${c.cpuPerRoundTrip.broker.toFixed(3)}  load ${c.load}`;
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
