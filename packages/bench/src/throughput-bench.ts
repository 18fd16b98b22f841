/**
 * Throughput benchmark (not a test): per ingress (HTTP, Kafka) and concurrency, effects/s, submit →
 * answer p50/p99, the latency added over a direct POST of the same charge to the same provider
 * process (measured in the same run, at the same concurrency), CPU ms per effect of every process
 * involved, and what PostgreSQL wrote per effect (WAL bytes, WAL fsyncs, transactions). Reps are
 * interleaved (rep 1 of every lane, then rep 2…), so a noisy neighbour hits every lane alike.
 * PostgreSQL ledger with the server's durability settings (stock: synchronous_commit on).
 *
 *   npm run bench:throughput -- [--quick] [--concurrency 1,16,64] [--reps 3] [--effects 2000] [--profile DIR]
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { spawnSimulator } from '@effectd/simulators';
import { startFleet, type Fleet } from './throughput/fleet.js';
import { DBOS_VERSION, startDbosApp, type DbosApp } from './throughput/dbos-lane.js';
import { benchCommands, dbosCall, directCall, httpCall, kafkaCaller } from './throughput/lanes.js';
import { closedLoop, httpPoster, quantile, type Call } from './throughput/load.js';
import { parseBenchOptions, USAGE, type BenchOptions } from './throughput/options.js';
import { benchDatabaseUrl, PgProbe } from './throughput/pg-counters.js';
import { BrokerRequests, requestDelta, type RequestDelta } from './throughput/broker-requests.js';
import { cpuDelta, findProcess, listeningPid, sampleCpu, type RolePids } from './throughput/proc-cpu.js';
import { ratios, renderBrokerRequests, renderRatios, renderTable, summarize, type LaneKey, type LaneRun } from './throughput/report.js';

const WARMUP_CONCURRENCY = 16;
/** Long enough for the backends' cumulative statistics to be flushed (PostgreSQL flushes an idle backend's within 1 s). */
const STATS_SETTLE_MS = 1_200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The processes a lane charges: an effectd fleet or the DBOS app. */
interface Measured {
  label: string;
  pids(): number[];
  applicationName: string;
}

interface Lane extends LaneKey {
  processes?: Measured;
  call(commands: ReturnType<typeof benchCommands>, tag: string): Call;
}

async function main(options: BenchOptions): Promise<void> {
  const run = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const dir = join(tmpdir(), `effectd-throughput-${run}`);
  mkdirSync(dir, { recursive: true });
  if (options.profileDir) {
    mkdirSync(options.profileDir, { recursive: true });
    // Read by spawnEffectdProcess: only the effectd processes run under the profiler.
    process.env.EFFECTD_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${resolve(options.profileDir)}`;
  }
  const database = await benchDatabaseUrl(options.pgUrl);
  if (database.note) process.stderr.write(`note: ${database.note}\n`);
  const probe = await PgProbe.open(database.url);
  const synchronousCommit = await probe.scalar('SHOW synchronous_commit');
  const wantsKafka = options.ingresses.includes('kafka');
  // The broker behind --kafka (its first address), whichever other brokers run here.
  const brokerPid = wantsKafka ? listeningPid(Number(options.brokers[0]!.split(':').pop())) ?? findProcess('kafka.Kafka') : undefined;
  const brokerRequests = brokerPid ? await BrokerRequests.attach(brokerPid) : undefined;
  const payments = await spawnSimulator('payments');
  const poster = httpPoster();
  const fleets: Fleet[] = [];
  let dbos: DbosApp | undefined;
  const closers: (() => Promise<void>)[] = [];
  const runs: LaneRun[] = [];
  let idleEffectdMsPerSecond: Record<string, number> | undefined;
  let idleBrokerRequests: RequestDelta | undefined;
  try {
    const setup = { run, dir, secret: randomBytes(32).toString('hex'), ledgerUrl: database.url, brokers: options.brokers, paymentsUrl: payments.url };
    const kafkaCalls = new Map<Fleet, Awaited<ReturnType<typeof kafkaCaller>>>();
    const builds = [{ name: 'this' }, ...(options.baseline ? [{ name: 'baseline', root: options.baseline }] : [])];
    for (const size of options.instances) for (const workers of options.workers) {
      // The baseline is measured with one process per instance (--workers may be newer than it).
      for (const ingress of (['http', 'kafka'] as const).filter((i) => options.ingresses.includes(i))) for (const build of builds.filter((b) => workers.count === 1 || b.name === 'this')) {
        process.stderr.write(`starting ${size} effectd instance(s) of ${build.name}${workers.count > 1 ? ` with ${workers.count} workers each (${workers.sched})` : ''}, ${ingress} ingress…\n`);
        const fleet = await startFleet(ingress, size, setup, build, workers);
        fleets.push(fleet);
        if (ingress === 'kafka') {
          const kafka = await kafkaCaller(fleet, options.brokers);
          closers.push(kafka.close);
          kafkaCalls.set(fleet, kafka);
        }
      }
    }
    if (options.ingresses.includes('dbos')) {
      process.stderr.write(`starting the DBOS Transact ${DBOS_VERSION} app…\n`);
      dbos = await startDbosApp(database.url, payments.url, run);
    }
    const lanes: Lane[] = [];
    for (const concurrency of options.concurrency) {
      lanes.push({ ingress: 'direct', build: '-', instances: 0, concurrency, call: (commands, tag) => directCall(poster, payments.url, commands, run, tag) });
      for (const fleet of fleets) {
        const kafka = kafkaCalls.get(fleet);
        lanes.push({ ingress: fleet.ingress, build: fleet.build, instances: fleet.instances.length, concurrency, processes: fleet, call: (commands) => (kafka ? kafka.call(commands) : httpCall(poster, fleet, commands)) });
      }
      const app = dbos;
      if (app) lanes.push({ ingress: 'dbos', build: `dbos-${DBOS_VERSION}`, instances: 1, concurrency, processes: app, call: (commands) => dbosCall(poster, app, commands) });
    }
    const rolePids = async (lane: Lane): Promise<RolePids> => ({
      // The direct lane charges the idle first fleet: what effectd costs while nobody calls it. The dbos lane: the DBOS app.
      effectd: (lane.processes ?? fleets[0])?.pids() ?? [],
      postgres: await probe.processes((lane.processes ?? fleets[0])?.applicationName ?? ''),
      'kafka broker': brokerPid ? [brokerPid] : [],
      provider: [payments.pid],
      'load generator': [process.pid],
    });
    const tagOf = (lane: Lane, rep: number) => `${lane.processes?.label ?? 'direct'}c${lane.concurrency}r${rep}`;

    if (options.warmup > 0) {
      for (const lane of lanes) {
        // At least WARMUP_CONCURRENCY at a time: V8 takes some 10,000 effects to finish optimising
        // effectd's code, and a c=1 lane warmed up one at a time would be measured while it compiles.
        const concurrency = Math.max(lane.concurrency, WARMUP_CONCURRENCY);
        process.stderr.write(`warm-up ${tagOf(lane, 0)}: ${options.warmup} effects, ${concurrency} at a time…\n`);
        const commands = benchCommands(run, `${tagOf(lane, 0)}w`, options.warmup);
        await closedLoop(options.warmup, concurrency, lane.call(commands, `${tagOf(lane, 0)}w`));
      }
    }
    const idle: { measured: Measured; instances: number }[] = [...fleets.map((f) => ({ measured: f, instances: f.instances.length })), ...(dbos ? [{ measured: dbos, instances: 1 }] : [])];
    if (idle.length > 0) {
      // What an instance spends per second with no load at all (polling, timers): a c=1 effect pays its share of it.
      await sleep(STATS_SETTLE_MS);
      const pids = Object.fromEntries(idle.map(({ measured }) => [measured.label, measured.pids()]));
      const requestsBefore = await brokerRequests?.sample();
      const before = sampleCpu(pids);
      await sleep(options.idleSeconds * 1000);
      const used = cpuDelta(before, sampleCpu(pids));
      if (brokerRequests && requestsBefore) idleBrokerRequests = requestDelta(requestsBefore, await brokerRequests.sample());
      idleEffectdMsPerSecond = Object.fromEntries(idle.map(({ measured, instances }) => [measured.label, used[measured.label]! / options.idleSeconds / instances]));
    }
    for (let rep = 1; rep <= options.reps; rep++) {
      // Builds take turns going first at each concurrency (this, baseline / baseline, this…): no build always runs right after the direct lane.
      const order = rep % 2 === 1 ? lanes : lanes.map((lane, i) => (lane.build === 'this' && lanes[i + 1]?.build === 'baseline' ? lanes[i + 1]! : lane.build === 'baseline' && lanes[i - 1]?.build === 'this' ? lanes[i - 1]! : lane));
      for (const lane of order) {
        const tag = tagOf(lane, rep);
        const commands = benchCommands(run, tag, options.effects);
        process.stderr.write(`${tag}: ${options.effects} effects, ${lane.concurrency} at a time…\n`);
        await sleep(STATS_SETTLE_MS);
        const pids = await rolePids(lane);
        const countersBefore = await probe.counters();
        const requestsBefore = await brokerRequests?.sample();
        const cpuBefore = sampleCpu(pids);
        const load = await closedLoop(options.effects, lane.concurrency, lane.call(commands, tag));
        // Backends the pool opened during the lane count from zero (the pool closes idle ones after 10 s, so a lane may start with few).
        const cpu = cpuDelta(cpuBefore, sampleCpu({ ...pids, postgres: [...new Set([...pids.postgres!, ...(await rolePids(lane)).postgres!])] }));
        const requests = requestsBefore && brokerRequests ? requestDelta(requestsBefore, await brokerRequests.sample()) : undefined;
        await sleep(STATS_SETTLE_MS);
        const pg = await probe.delta(countersBefore, await probe.counters());
        const n = options.effects;
        runs.push({
          ingress: lane.ingress, build: lane.build, instances: lane.instances, concurrency: lane.concurrency, rep, effects: n, notDone: load.notDone, seconds: load.seconds,
          perSecond: n / load.seconds, p50: quantile(load.latencies, 0.5), p99: quantile(load.latencies, 0.99),
          cpuMsPerEffect: Object.fromEntries(Object.keys(pids).map((role) => [role, cpu[role]! / n])),
          machineBusy: cpu.machine! / (load.seconds * 1000 * cpus().length),
          walBytesPerEffect: pg.walBytes / n, walRecordsPerEffect: pg.walRecords / n, walSyncsPerEffect: pg.walSync / n, xactCommitsPerEffect: pg.xactCommit / n,
          ...(pg.statements !== undefined ? { statementsPerEffect: pg.statements / n } : {}),
          ...(requests ? { brokerRequestsPerEffect: requests.total / n, brokerRequestsByApi: Object.fromEntries(Object.entries(requests.byApi).map(([api, count]) => [api, count / n])) } : {}),
        });
      }
    }
  } finally {
    brokerRequests?.close();
    for (const close of closers) await close().catch(() => {});
    for (const fleet of fleets) await fleet.stop().catch(() => {});
    await dbos?.stop();
    poster.close();
    await payments.stop();
    for (const fleet of fleets) await probe.scalar(`DROP SCHEMA IF EXISTS ${fleet.schema} CASCADE`).catch(() => '');
    if (dbos) await probe.scalar(`DROP DATABASE IF EXISTS ${dbos.database} WITH (FORCE)`).catch(() => '');
    await probe.close();
  }

  const summaries = summarize(runs);
  console.log(`\neffectd throughput — PostgreSQL ledger (synchronous_commit=${synchronousCommit}), payments simulator in its own process, closed loop, ${options.effects} effects × ${options.reps} rep(s) interleaved, medians; ${cpus().length} cores, node ${process.version}, ${new Date().toISOString()}`);
  console.log(renderTable(summaries));
  const breakdown = renderBrokerRequests(summaries);
  if (breakdown) console.log(`\nthe broker's requests per effect, by API (its JMX RequestMetrics; every client of the broker counts, controller requests excluded):\n${breakdown}`);
  console.log(`
+p50/+p99 = added over the direct lane (the same charge POSTed straight to the provider, same rep and concurrency).
CPU ms/eff = utime+stime from /proc/<pid>/stat over the measured run ÷ effects (10 ms ticks), every process of the role summed:
  effectd = the lane's instances (direct lane: the idle first fleet; dbos lane: the DBOS Transact app); postgres = the lane's backends (application_name) + the cluster's own processes + postmaster;
  kafka broker = the broker's JVM; load generator = this process. Idle effectd (no load, ${options.idleSeconds} s), CPU ms per second per instance: ${idleEffectdMsPerSecond === undefined ? '-' : Object.entries(idleEffectdMsPerSecond).map(([f, ms]) => `${f} ${ms.toFixed(1)}`).join(', ')}${idleBrokerRequests ? `; the broker served ${(idleBrokerRequests.total / options.idleSeconds).toFixed(1)} client requests/s meanwhile (${Object.entries(idleBrokerRequests.byApi).map(([api, n]) => `${api} ${(n / options.idleSeconds).toFixed(1)}`).join(', ')})` : ''}.
broker req/eff = requests the broker served its clients during the lane ÷ effects (its own JMX count, every API but the controller's; the HTTP lanes show what the idle Kafka fleet and other clients cost it).
WAL B/eff = pg_wal_lsn_diff over the lane (whole cluster: other sessions' writes count too); wal_sync/eff = pg_stat_wal.wal_sync (WAL fsyncs, cluster) — the durable commits;
xact/eff = pg_stat_database.xact_commit of the bench database (each autocommit statement is one; the dbos lane's system database is its own, so its commits show only in wal_sync/eff), ${probe.hasStatements ? 'stmts/eff = pg_stat_statements calls' : 'pg_stat_statements is not installed, so no statement count'}.`);
  const compared = ratios(runs);
  if (compared.length > 0) console.log(`\nthis ÷ baseline (${options.baseline}), paired by rep, median (< 1 = less of it in this build):\n${renderRatios(compared)}`);
  const out = options.out ?? join('bench-results', `throughput-${run}.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ run, at: new Date().toISOString(), node: process.version, cores: cpus().length, synchronousCommit, options: { ...options, pgUrl: undefined }, idleEffectdMsPerSecond, idleBrokerRequests, summaries, ratios: compared, runs }, null, 2));
  console.log(`\nwrote ${out}`);
}

let options: BenchOptions | undefined;
try {
  options = parseBenchOptions(process.argv.slice(2));
} catch (error) {
  console.error(`${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (!options) {
  console.log(USAGE);
  process.exit(0);
}
if (options.baseline && !existsSync(join(options.baseline, 'dist', 'src', 'cli', 'main.js'))) {
  console.error(`--baseline ${options.baseline}: no built effectd there (dist/src/cli/main.js is missing; run npm run build in it)`);
  process.exit(2);
}
main(options).then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
