// npm run fleet:scale -- [--quota 0.4] [--seconds 30] [--warmup 10] [--workers 48] [--kafka-workers 96] [--steps 5]
// Scale-out measured on the fleet's hosts (issue 30): PostgreSQL (primary only, pg_stat_statements
// loaded), three KRaft brokers, the payments simulator, an HAProxy host, the load generator's host,
// and 1, 2, 3 effectd instances, each effectd process alone in a cgroup with a CPU quota (cgroup v1
// cpu controller), so that what one instance can do is bounded the same way on any machine. For
// each instance count, three lanes, one after the other:
//   http-rr    POST /v1/effects round-robin over the instances (no routing: consecutive steps of a
//              workflow land on different instances);
//   http-hash  through HAProxy hashing on the command's workflowId (deploy/haproxy/effectd-by-workflow.cfg);
//   kafka      the SDK's EffectClient, commands keyed by workflowId, the commands topic's partitions
//              spread over the instances of one consumer group.
// Workflows of --steps steps, one step after the other. Prints one table; docs/benchmark.md has the
// numbers of one run. Tears the fleet down (also on failure or Ctrl-C).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs from 'kafkajs';
import * as net from './net.mjs';
import * as svc from './services.mjs';
import { confine, cpuStat, quotaRoot, removeQuotaRoot } from './scale/cpu-quota.mjs';
import { cell, printTable } from './scale/cell.mjs';

const { values } = parseArgs({
  options: {
    quota: { type: 'string', default: '0.4' }, seconds: { type: 'string', default: '30' }, warmup: { type: 'string', default: '10' },
    workers: { type: 'string', default: '48' }, 'kafka-workers': { type: 'string', default: '96' }, steps: { type: 'string', default: '5' }, instances: { type: 'string', default: '1,2,3' },
    lanes: { type: 'string', default: 'http-rr,http-hash,kafka' }, 'max-load': { type: 'string', default: '3' }, 'load-wait-minutes': { type: 'string', default: '20' },
    cleanup: { type: 'boolean' },
  },
});
const NET = process.env.EFFECTD_FLEET_NET ?? '0';
const cgroupRoot = quotaRoot(`effectd-scale${NET}`);
if (values.cleanup) {
  net.destroyAll((m) => console.log(`[scale] ${m}`));
  removeQuotaRoot(cgroupRoot);
  process.exit(0);
}
const quota = Number(values.quota);
const instanceCounts = values.instances.split(',').map(Number);
const lanes = values.lanes.split(',');
const load = { measureMs: Number(values.seconds) * 1000, warmupMs: Number(values.warmup) * 1000, workers: Number(values.workers), kafkaWorkers: Number(values['kafka-workers']), steps: Number(values.steps) };

const runDir = join(svc.REPO, '.data', 'fleet', `scale-${new Date().toISOString().replace(/[:.]/g, '-')}`);
mkdirSync(join(runDir, 'logs'), { recursive: true });
const t00 = Date.now();
const log = (m) => console.log(`[scale ${((Date.now() - t00) / 1000).toFixed(1).padStart(6)}s] ${m}`);
const load1 = () => loadavg()[0].toFixed(2);

let tornDown = false;
function teardown() {
  if (tornDown) return;
  tornDown = true;
  net.destroyAll((m) => log(m));
  removeQuotaRoot(cgroupRoot);
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { log(`${sig}: tearing down`); teardown(); process.exit(130); });
process.on('exit', teardown);

const H = {
  pg1: net.host('pg1', 11), k1: net.host('k1', 21), k2: net.host('k2', 22), k3: net.host('k3', 23),
  e1: net.host('e1', 31), e2: net.host('e2', 32), e3: net.host('e3', 33),
  sim: net.host('sim', 40), agent: net.host('agent', 50), proxy: net.host('proxy', 60),
};

async function waitForQuietMachine() {
  const max = Number(values['max-load']);
  const deadline = Date.now() + Number(values['load-wait-minutes']) * 60_000;
  while (loadavg()[0] >= max && Date.now() < deadline) {
    log(`1-minute load ${load1()} ≥ ${max}: waiting (until ${new Date(deadline).toISOString().slice(11, 19)} UTC at most)`);
    await sleep(30_000);
  }
  const quiet = loadavg()[0] < max;
  log(quiet ? `1-minute load ${load1()} < ${max}: measuring` : `1-minute load still ${load1()} after the wait: measuring anyway`);
  return quiet;
}

/** HAProxy from the documented config, its `server` lines replaced by the instances measured. */
function startProxy(instances) {
  const doc = readFileSync(join(svc.REPO, 'deploy/haproxy/effectd-by-workflow.cfg'), 'utf8');
  const servers = instances.map((e) => `  server ${e.host.name} ${e.host.ip}:8080`).join('\n');
  const cfg = `${doc.split('\n').filter((l) => !/^\s*server\s/.test(l)).join('\n').trimEnd()}\n${servers}\n`;
  const file = join(runDir, `haproxy-${instances.length}.cfg`);
  writeFileSync(file, cfg);
  return { proc: svc.startProc(runDir, H.proxy, `haproxy-${instances.length}`, 'haproxy', ['-db', '-f', file]), url: `http://${H.proxy.ip}:8080` };
}

async function stop(proc, ms = 20_000) {
  if (!proc?.alive) return;
  proc.signal('SIGTERM');
  if ((await Promise.race([proc.exited, sleep(ms).then(() => 'late')])) === 'late') {
    proc.signal('SIGKILL');
    await proc.exited;
  }
}

try {
  net.destroyAll((m) => log(`leftover: ${m}`));
  removeQuotaRoot(cgroupRoot);
  log(`run dir ${runDir}; EFFECTD_FLEET_NET=${NET}; quota ${quota} CPU per effectd; ${load.workers} HTTP / ${load.kafkaWorkers} Kafka workers, workflows of ${load.steps} steps; ${values.warmup} s warm-up + ${values.seconds} s measured per cell`);
  net.createBridge();
  for (const h of Object.values(H)) net.createHost(h);

  const kafkaP = svc.startKafka(runDir, [H.k1, H.k2, H.k3]);
  await svc.startPgPrimary(runDir, H.pg1, { extraConf: "shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = top" });
  svc.psql(H.pg1, 'effectd', 'CREATE EXTENSION pg_stat_statements');
  const sim = await svc.startSimulator(runDir, H.sim);
  const kafka = await kafkaP;
  await svc.createTopics(kafkajs, kafka.bootstrap);
  log(`PostgreSQL primary ${H.pg1.ip} (no standby), Kafka 3 brokers ${kafka.bootstrap.join(',')}, payments ${sim.url}`);

  const tokens = Object.fromEntries(['t1', 't2', 't3'].map((t) => [t, `efd_agent_${t}_${randomBytes(16).toString('hex')}`]));
  const credFile = join(runDir, 'credentials.json');
  writeFileSync(credFile, JSON.stringify({ credentials: Object.entries(tokens).map(([tenant, token]) => ({ token, role: 'agent', tenant, name: `agent-${tenant}` })) }), { mode: 0o600 });
  const config = svc.writeEffectdConfig(runDir, sim.url, 3_000);
  const ledgerUrl = `postgres://effectd:effectd@${H.pg1.ip}:5432/effectd`;
  const env = { EFFECTD_SECRET: randomBytes(32).toString('hex'), EFFECTD_CREDENTIALS: credFile, EFFECTD_LOG_LEVEL: 'warn' };

  const loadBefore = load1();
  const quiet = await waitForQuietMachine();
  const loadAtStart = load1();
  const results = [];
  for (const n of instanceCounts) {
    const names = ['e1', 'e2', 'e3'].slice(0, n);
    const instances = [];
    for (const name of names) {
      const e = await svc.startEffectd(runDir, H[name], { ledgerUrl, bootstrap: kafka.bootstrap, config, env });
      e.quota = confine(cgroupRoot, name, e.proc.pid, quota);
      instances.push(e);
    }
    await Promise.all(instances.map((e) => e.ready));
    const proxy = startProxy(instances);
    log(`${n} effectd (${names.join(' ')}; ${quota} CPU each) ready; HAProxy ${proxy.url}`);
    for (const lane of lanes) {
      const row = await cell({
        lane, instances, proxy, kafka, tokens, load, pg: H.pg1, agent: H.agent, runDir, log,
        cpu: () => Object.fromEntries(instances.map((e) => [e.host.name, cpuStat(e.quota.dir)])),
      });
      results.push({ instances: n, ...row });
    }
    await stop(proxy.proc);
    await Promise.all(instances.map((e) => stop(e.proc)));
  }
  const loadAfter = load1();
  writeFileSync(join(runDir, 'result.json'), JSON.stringify({ quota, load, loadBefore, loadAtStart, loadAfter, quiet, results }, null, 2));
  console.log(`\n==================== scale-out: effectd at ${quota} CPU each (cgroup v1 cpu quota), ${load.workers} HTTP / ${load.kafkaWorkers} Kafka workers, ${load.steps}-step workflows, ${values.seconds} s per cell ====================`);
  printTable(results);
  console.log(`machine (2 cores, shared): 1-minute load ${loadBefore} when the fleet was up, ${loadAtStart} when measuring started${quiet ? '' : ` (never under ${values['max-load']} in ${values['load-wait-minutes']} min)`}, ${loadAfter} at the end`);
  console.log(`logs and result.json: ${runDir}`);
  teardown();
  process.exit(0);
} catch (error) {
  console.error(`[scale] FAILED: ${error?.stack ?? error}`);
  console.error(`logs: ${runDir}/logs`);
  teardown();
  process.exit(2);
}
