/**
 * The Kafka path, per effect (not a test; needs `npm run services:up`): how many requests the
 * SDK's EffectClient and one effectd instance send to the broker for each effect — produce and
 * fetch requests, records per produce request, fetch responses that came back empty, offset
 * commits, heartbeats, the rest — counted at kafkajs's request level in both processes
 * (kafka-requests/counter.ts; effectd runs under `node --import kafka-requests/preload.js`).
 * Counts, not times: a busy machine moves them little. Same lane as `bench:throughput`'s Kafka
 * lane: one effectd instance (`--no-http --kafka`, PostgreSQL ledger), the payments simulator in
 * its own process, 6-partition topics of its own, one EffectClient for every caller, closed loop.
 *
 * `--baseline DIR` also runs the effectd built in DIR (a copy of dist/, bin/ and package.json under
 * this checkout, or another checkout) with that build's own SDK, lanes interleaved: before and after
 * in one run, on the same broker and the same load.
 *
 *   node packages/bench/dist/packages/bench/src/kafka-requests.js [--effects 1000] [--warmup 500] [--concurrency 16,64] [--reps 1] [--idle-seconds 3] [--baseline DIR]
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { spawnSimulator } from '@effectd/simulators';
import { installKafkaRequestCounter, kafkaRequestCounts, type ClientCounts, type Counts } from './kafka-requests/counter.js';
import { EffectClient, type EffectRequest } from '../../../src/sdk/index.js';
import { startFleet, type Fleet } from './throughput/fleet.js';
import { benchCommands } from './throughput/lanes.js';
import { closedLoop, quantile } from './throughput/load.js';
import { benchDatabaseUrl, PgProbe } from './throughput/pg-counters.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The counts of one side (the SDK's clients or effectd's), summed over its client ids. */
function side(counts: Counts, pick: (clientId: string) => boolean): ClientCounts {
  const sum: ClientCounts = { requests: {}, producedRecords: 0, emptyFetches: 0, fetchedRecords: 0 };
  for (const [id, c] of Object.entries(counts)) {
    if (!pick(id)) continue;
    for (const [api, n] of Object.entries(c.requests)) sum.requests[api] = (sum.requests[api] ?? 0) + n;
    sum.producedRecords += c.producedRecords;
    sum.emptyFetches += c.emptyFetches;
    sum.fetchedRecords += c.fetchedRecords;
  }
  return sum;
}

function minus(after: ClientCounts, before: ClientCounts): ClientCounts {
  const requests: Record<string, number> = {};
  for (const [api, n] of Object.entries(after.requests)) {
    const d = n - (before.requests[api] ?? 0);
    if (d !== 0) requests[api] = d;
  }
  return { requests, producedRecords: after.producedRecords - before.producedRecords, emptyFetches: after.emptyFetches - before.emptyFetches, fetchedRecords: after.fetchedRecords - before.fetchedRecords };
}

/** A build's clients: its SDK's EffectClient is `effectd-client-<build>`, its effectd's counts are in a file of their own. */
const isSdk = (build: string) => (id: string) => id === `effectd-client-${build}`;
/** effectd's kafkajs clients are `effectd-<pid>` (the ingress); the fleet's admin is `effectd-bench`. */
const isEffectd = (id: string) => !id.startsWith('effectd-client-') && id !== 'effectd-bench';

interface Snapshot {
  sdk: ClientCounts;
  effectd: ClientCounts;
}

/** One build's sides now: this process's counts of its SDK client, and its effectd's file once written after `since`. */
async function snapshot(build: string, file: string, since: number): Promise<Snapshot> {
  for (;;) {
    if (existsSync(file)) {
      const { at, counts } = JSON.parse(readFileSync(file, 'utf8')) as { at: number; counts: Counts };
      if (at >= since) return { sdk: side(kafkaRequestCounts(), isSdk(build)), effectd: side(counts, isEffectd) };
    }
    await sleep(5);
  }
}

const delta = (after: Snapshot, before: Snapshot): Snapshot => ({ sdk: minus(after.sdk, before.sdk), effectd: minus(after.effectd, before.effectd) });

const API_ROWS = ['Produce', 'Fetch', 'OffsetCommit', 'Heartbeat', 'Metadata'] as const;

interface Row {
  label: string;
  sdk: string;
  effectd: string;
}

function rows(d: Snapshot, per: number, unit: string): Row[] {
  const f = (n: number) => (per === 0 ? '-' : (n / per).toFixed(3));
  const ratio = (a: number, b: number) => (b === 0 ? '-' : (a / b).toFixed(1));
  const total = (c: ClientCounts) => Object.values(c.requests).reduce((a, b) => a + b, 0);
  const other = (c: ClientCounts) => total(c) - API_ROWS.reduce((n, api) => n + (c.requests[api] ?? 0), 0);
  const both = (label: string, fn: (c: ClientCounts) => string): Row => ({ label, sdk: fn(d.sdk), effectd: fn(d.effectd) });
  return [
    both(`requests ${unit}, all`, (c) => f(total(c))),
    ...API_ROWS.map((api) => both(`  ${api} ${unit}`, (c) => f(c.requests[api] ?? 0))),
    both(`  other ${unit}`, (c) => f(other(c))),
    both('records per Produce request', (c) => ratio(c.producedRecords, c.requests.Produce ?? 0)),
    both('Fetch responses empty', (c) => `${c.emptyFetches} of ${c.requests.Fetch ?? 0}`),
    both('records per non-empty Fetch', (c) => ratio(c.fetchedRecords, (c.requests.Fetch ?? 0) - c.emptyFetches)),
  ];
}

function render(title: string, table: Row[]): string {
  const width = Math.max(...table.map((r) => r.label.length));
  return [`${title}`, `${''.padEnd(width)}  ${'SDK'.padStart(12)}  ${'effectd'.padStart(12)}`, ...table.map((r) => `${r.label.padEnd(width)}  ${r.sdk.padStart(12)}  ${r.effectd.padStart(12)}`)].join('\n');
}

interface Build {
  name: string;
  root?: string;
  countsFile: string;
  fleet?: Fleet;
  client?: { submit(request: EffectRequest): Promise<{ status: string }>; close(): Promise<void> };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    effects: { type: 'string' }, warmup: { type: 'string' }, reps: { type: 'string' }, concurrency: { type: 'string' }, 'idle-seconds': { type: 'string' },
    baseline: { type: 'string' }, pg: { type: 'string' }, kafka: { type: 'string' }, out: { type: 'string' },
  } });
  const effects = Number(values.effects ?? 1000);
  const warmup = Number(values.warmup ?? 500);
  const reps = Number(values.reps ?? 1);
  const idleSeconds = Number(values['idle-seconds'] ?? 3);
  const concurrency = (values.concurrency ?? '16,64').split(',').map(Number);
  const brokers = (values.kafka ?? process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const pgUrl = values.pg ?? process.env.EFFECTD_TEST_PG_URL ?? 'postgres://effectd:effectd@127.0.0.1:5432/effectd_test';

  installKafkaRequestCounter();
  const run = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const dir = join(tmpdir(), `effectd-kafka-requests-${run}`);
  mkdirSync(dir, { recursive: true });
  const preload = join(dirname(fileURLToPath(import.meta.url)), 'kafka-requests', 'preload.js');
  // Read by spawnEffectdProcess: node arguments of the effectd processes only.
  process.env.EFFECTD_NODE_ARGS = `--import ${pathToFileURL(preload).href}`;
  const builds: Build[] = [{ name: 'this', countsFile: join(dir, 'this.json') }, ...(values.baseline ? [{ name: 'baseline', root: resolve(values.baseline), countsFile: join(dir, 'baseline.json') }] : [])];

  const database = await benchDatabaseUrl(pgUrl);
  const probe = await PgProbe.open(database.url);
  const payments = await spawnSimulator('payments');
  const setup = { run, dir, secret: randomBytes(32).toString('hex'), ledgerUrl: database.url, brokers, paymentsUrl: payments.url };
  const results: { build: string; concurrency: number; rep: number; effects: number; notDone: number; seconds: number; p50: number; p99: number; loadavg1: number; run: Snapshot; idle: Snapshot }[] = [];
  try {
    for (const build of builds) {
      // Each effectd writes its counts to its own file (the preload reads the variable when it starts).
      process.env.KAFKA_REQUEST_COUNTS_FILE = build.countsFile;
      build.fleet = await startFleet('kafka', 1, setup, build.root ? { name: build.name, root: build.root } : { name: build.name });
      // The build's own SDK (the baseline's compiled one from its dist/), on the same kafkajs module.
      const sdk = (build.root ? await import(pathToFileURL(join(build.root, 'dist', 'src', 'sdk', 'index.js')).href) : { EffectClient }) as { EffectClient: typeof EffectClient };
      build.client = await sdk.EffectClient.connect({ brokers, token: build.fleet.token, clientId: `effectd-client-${build.name}`, commandsTopic: build.fleet.topics.commands, outcomesTopic: build.fleet.topics.outcomes, timeoutMs: 120_000 });
    }
    const call = (build: Build, commands: EffectRequest[]) => async (i: number) => (await build.client!.submit(commands[i]!)).status === 'done';
    for (const c of concurrency) for (const build of builds) {
      if (warmup > 0) await closedLoop(warmup, Math.max(16, c), call(build, benchCommands(run, `${build.name}k${c}w`, warmup)));
    }
    for (let rep = 1; rep <= reps; rep++) for (const c of concurrency) {
      // Builds take turns going first.
      for (const build of rep % 2 === 1 ? builds : [...builds].reverse()) {
        await sleep(500);
        const load = loadavg()[0]!;
        const before = await snapshot(build.name, build.countsFile, Date.now());
        const result = await closedLoop(effects, c, call(build, benchCommands(run, `${build.name}k${c}r${rep}`, effects)));
        const after = await snapshot(build.name, build.countsFile, Date.now());
        await sleep(idleSeconds * 1000);
        const idleEnd = await snapshot(build.name, build.countsFile, Date.now());
        results.push({ build: build.name, concurrency: c, rep, effects, notDone: result.notDone, seconds: result.seconds, p50: quantile(result.latencies, 0.5), p99: quantile(result.latencies, 0.99), loadavg1: load, run: delta(after, before), idle: delta(idleEnd, after) });
      }
    }
  } finally {
    for (const build of builds) {
      await build.client?.close().catch(() => {});
      await build.fleet?.stop().catch(() => {});
      if (build.fleet) await probe.scalar(`DROP SCHEMA IF EXISTS ${build.fleet.schema} CASCADE`).catch(() => '');
    }
    await payments.stop();
    await probe.close();
  }
  console.log(`\nKafka path, requests to the broker counted in kafkajs (SDK: this process's EffectClient of the build; effectd: its ingress), one effectd, PostgreSQL ledger, payments simulator; ${effects} effects per lane, warm-up ${warmup}; ${cpus().length} cores, node ${process.version}, ${new Date().toISOString()}`);
  for (const r of results) {
    const head = `\n${r.build}, c=${r.concurrency}, rep ${r.rep}: ${r.notDone} not done, ${(r.effects / r.seconds).toFixed(0)}/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; load average ${r.loadavg1.toFixed(2)}`;
    console.log(render(`${head}\nper effect`, rows(r.run, r.effects, 'per effect')));
    console.log(render(`idle, the ${idleSeconds} s after it`, rows(r.idle, idleSeconds, 'per second')));
  }
  const file = values.out ?? join('bench-results', `kafka-requests-${run}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ run, at: new Date().toISOString(), effects, warmup, reps, baseline: values.baseline ?? null, results }, null, 2));
  console.log(`\nwrote ${file}`);
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
