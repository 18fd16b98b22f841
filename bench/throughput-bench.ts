/**
 * Throughput benchmark (not a test): effects/s and end-to-end latency (submit → answer) of the
 * Kafka ingress vs the HTTP ingress, with 1 and 2 effectd instances (separate processes), on the
 * PostgreSQL ledger (synchronous_commit on), against the simulated payment provider in its own
 * process — all in one run. Also shows where the machine's CPU went, per component.
 *
 *   npm run bench:throughput [-- --effects 4000 --window 256 --pg postgres://… --kafka 127.0.0.1:9092]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { writeFastPaymentsConfig } from '../src/harness/tool-config-files.js';
import { spawnEffectdProcess, type EffectdProcess } from '../src/harness/effectd-process.js';
import { spawnSimulator, type SimulatorProcess } from '../src/harness/simulator-process.js';
import { EffectClient, type EffectAnswer, type EffectRequest } from '../src/sdk/index.js';
import { pgScalar } from '../src/bench/pg-scalar.js';

const { values } = parseArgs({ options: {
  effects: { type: 'string', default: '4000' },
  warmup: { type: 'string', default: '400' },
  window: { type: 'string', default: '256' },
  pg: { type: 'string' },
  kafka: { type: 'string' },
  only: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} });
if (values.help) {
  console.log('Usage: npm run bench:throughput -- [--effects N (4000)] [--warmup N (400)] [--window W (256 commands in flight)] [--pg postgres://…] [--kafka host:port] [--only kafka1,http1,kafka2,http2]');
  process.exit(0);
}
const EFFECTS = Number(values.effects);
const WARMUP = Number(values.warmup);
const WINDOW = Number(values.window);
const PG_URL = values.pg ?? process.env.EFFECTD_TEST_PG_URL ?? 'postgres://effectd:effectd@127.0.0.1:5432/effectd_test';
const BROKERS = (values.kafka ?? process.env.EFFECTD_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const RUN = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const SECRET = randomBytes(32).toString('hex');

type Ingress = 'kafka' | 'http';
interface Scenario { ingress: Ingress; instances: number }
interface Result extends Scenario { effects: number; perSecond: number; p50: number; p99: number; notDone: number; cpu: Record<string, number>; seconds: number }

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

// ---------------------------------------------------------------- CPU accounting (/proc, Linux)
const TICKS = 100;
function cpuTicks(classify: (pid: number, comm: string) => string | undefined): Map<string, number> {
  const totals = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const who = classify(Number(entry), comm);
    if (!who) continue;
    totals.set(who, (totals.get(who) ?? 0) + Number(fields[11]) + Number(fields[12]));
  }
  return totals;
}

/** Busy ticks of the whole machine (every process, the kernel, interrupts) from /proc/stat. */
function machineBusyTicks(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return user! + nice! + system! + irq! + softirq! + steal!;
}

// ---------------------------------------------------------------- setup helpers

function credentialsFile(dir: string): { file: string; token: string } {
  const token = `efd_agent_${randomBytes(24).toString('base64url')}`;
  const file = join(dir, 'credentials.json');
  writeFileSync(file, JSON.stringify({ credentials: [
    { token, role: 'agent', tenant: 'default', name: 'bench-agent' },
    { token: `efd_operator_${randomBytes(24).toString('base64url')}`, role: 'operator', tenant: '*', name: 'bench-operator' },
  ] }), { mode: 0o600 });
  return { file, token };
}

async function kafkaTopics(names: string[], action: 'create' | 'delete'): Promise<void> {
  const admin = new Kafka({ clientId: 'effectd-bench', brokers: BROKERS, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    if (action === 'create') await admin.createTopics({ waitForLeaders: true, topics: names.map((topic) => ({ topic, numPartitions: topic.includes('.dlq.') ? 1 : 6, replicationFactor: 1 })) });
    else await admin.deleteTopics({ topics: names }).catch(() => {});
  } finally {
    await admin.disconnect();
  }
}

const pgQuery = (sql: string) => pgScalar(PG_URL, sql);

function commands(label: string, count: number): EffectRequest[] {
  // Four effects per workflow, spread apart in the stream (steps of one workflow rarely race).
  const workflows = Math.max(1, Math.ceil(count / 4));
  return Array.from({ length: count }, (_, i) => ({
    workflowId: `bench-${RUN}-${label}-${i % workflows}`, step: Math.floor(i / workflows) + 1, tool: 'payments.charge', principal: 'agent:bench',
    args: { invoiceId: `INV-${RUN}-${label}-${i}`, amount: 1000 + (i % 5000) },
  }));
}

// ---------------------------------------------------------------- load generators (closed loop, WINDOW in flight)
type Submit = (batch: EffectRequest[]) => Promise<EffectAnswer>[];

async function drive(list: EffectRequest[], submit: Submit): Promise<{ latencies: number[]; notDone: number; seconds: number }> {
  const latencies: number[] = [];
  let notDone = 0;
  let next = 0;
  let inFlight = 0;
  const started = performance.now();
  await new Promise<void>((finished) => {
    let scheduled = false;
    const refill = () => {
      scheduled = false;
      if (next >= list.length && inFlight === 0) return finished();
      const take = Math.min(WINDOW - inFlight, list.length - next);
      if (take <= 0) return;
      const batch = list.slice(next, next + take);
      next += take;
      inFlight += take;
      const t0 = performance.now();
      for (const answer of submit(batch)) {
        void answer.then((a) => {
          latencies.push(performance.now() - t0);
          if (a.status !== 'done') notDone++;
          inFlight--;
          if (!scheduled) {
            scheduled = true;
            setImmediate(refill);
          }
        });
      }
    };
    refill();
  });
  return { latencies, notDone, seconds: (performance.now() - started) / 1000 };
}

function httpSubmit(urls: string[], token: string): Submit {
  let turn = 0;
  return (batch) => batch.map(async (command) => {
    const url = urls[turn++ % urls.length]!;
    try {
      const res = await fetch(`${url}/v1/effects`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(command) });
      const body = (await res.json()) as { status?: string };
      return { status: body.status === 'done' ? 'done' : 'unknown', correlationId: '', message: '', replayed: false } as EffectAnswer;
    } catch (error) {
      return { status: 'unknown', correlationId: '', message: (error as Error).message, replayed: false } as EffectAnswer;
    }
  });
}

// ---------------------------------------------------------------- one scenario
async function runScenario(scenario: Scenario, paymentsUrl: string, simulatorPid: number, dir: string): Promise<Result> {
  const label = `${scenario.ingress}${scenario.instances}`;
  const schema = `bench_tp_${RUN}_${label}`;
  const topics = { commands: `effectd.commands.bench-${RUN}-${label}`, outcomes: `effectd.outcomes.bench-${RUN}-${label}`, deadLetters: `effectd.dlq.bench-${RUN}-${label}` };
  const credentials = credentialsFile(dir);
  const config = writeFastPaymentsConfig(dir, paymentsUrl, 10_000);
  const env: Record<string, string> = {
    EFFECTD_SECRET: SECRET, EFFECTD_CREDENTIALS: credentials.file,
    EFFECTD_KAFKA_COMMANDS_TOPIC: topics.commands, EFFECTD_KAFKA_OUTCOMES_TOPIC: topics.outcomes, EFFECTD_KAFKA_DLQ_TOPIC: topics.deadLetters,
  };
  const ledgerUrl = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  if (scenario.ingress === 'kafka') await kafkaTopics(Object.values(topics), 'create');
  const instances: EffectdProcess[] = [];
  let client: EffectClient | undefined;
  try {
    for (let i = 0; i < scenario.instances; i++) {
      const dataDir = join(dir, `${label}-${i}`);
      const args = ['--ledger', ledgerUrl, '--config', config, '--data-dir', dataDir, ...(scenario.ingress === 'kafka' ? ['--no-http', '--kafka', BROKERS.join(','), '--group', `effectd-bench-${RUN}-${label}`] : ['--port', '0'])];
      instances.push(await spawnEffectdProcess(args, env));
    }
    let submit: Submit;
    if (scenario.ingress === 'kafka') {
      const kafkaClient = await EffectClient.connect({ brokers: BROKERS, token: credentials.token, commandsTopic: topics.commands, outcomesTopic: topics.outcomes, timeoutMs: 120_000 });
      client = kafkaClient;
      submit = (batch) => kafkaClient.submitMany(batch);
      await waitForGroup(`effectd-bench-${RUN}-${label}`, scenario.instances);
    } else {
      submit = httpSubmit(instances.map((p) => p.url!), credentials.token);
    }
    process.stderr.write(`${label}: warm-up ${WARMUP}…\n`);
    await drive(commands(`${label}w`, WARMUP), submit);
    const effectdPids = new Set(instances.map((p) => p.pid));
    const classify = (pid: number, comm: string) =>
      effectdPids.has(pid) ? 'effectd' : pid === simulatorPid ? 'provider' : pid === process.pid ? 'load generator' : comm === 'postgres' ? 'postgres' : comm === 'java' ? 'kafka broker' : undefined;
    process.stderr.write(`${label}: ${EFFECTS} effects, ${WINDOW} in flight…\n`);
    const before = cpuTicks(classify);
    const busyBefore = machineBusyTicks();
    const { latencies, notDone, seconds } = await drive(commands(label, EFFECTS), submit);
    const after = cpuTicks(classify);
    const cpu = Object.fromEntries([...after].map(([who, ticks]) => [who, (ticks - (before.get(who) ?? 0)) / TICKS / seconds]));
    cpu.machine = (machineBusyTicks() - busyBefore) / TICKS / seconds;
    // Whatever else ran meanwhile (kernel work not charged to a process, other sessions' builds…).
    cpu.other = Math.max(0, cpu.machine - Object.entries(cpu).filter(([k]) => k !== 'machine').reduce((sum, [, v]) => sum + v, 0));
    latencies.sort((a, b) => a - b);
    return { ...scenario, effects: EFFECTS, perSecond: EFFECTS / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), notDone, cpu, seconds };
  } finally {
    await client?.close();
    for (const p of instances) await p.stop();
    if (scenario.ingress === 'kafka') await kafkaTopics(Object.values(topics), 'delete');
    await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => '');
  }
}

async function waitForGroup(groupId: string, members: number): Promise<void> {
  const admin = new Kafka({ clientId: 'effectd-bench', brokers: BROKERS, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    for (let i = 0; i < 300; i++) {
      const { groups } = await admin.describeGroups([groupId]);
      if (groups[0]?.state === 'Stable' && groups[0].members.length === members) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`group ${groupId} never became stable with ${members} members`);
  } finally {
    await admin.disconnect();
  }
}

// ---------------------------------------------------------------- main
async function main() {
  const synchronousCommit = await pgQuery('SHOW synchronous_commit');
  const dir = join(tmpdir(), `effectd-throughput-${RUN}`);
  mkdirSync(dir, { recursive: true });
  const payments: SimulatorProcess = await spawnSimulator('payments');
  const only = values.only?.split(',');
  const scenarios = ([{ ingress: 'kafka', instances: 1 }, { ingress: 'http', instances: 1 }, { ingress: 'kafka', instances: 2 }, { ingress: 'http', instances: 2 }] as Scenario[])
    .filter((s) => !only || only.includes(`${s.ingress}${s.instances}`));
  const results: Result[] = [];
  try {
    for (const scenario of scenarios) results.push(await runScenario(scenario, payments.url, payments.pid, dir));
  } finally {
    await payments.stop();
  }
  const components = ['machine', 'effectd', 'postgres', 'kafka broker', 'provider', 'load generator', 'other'];
  const header = ['ingress', 'instances', 'effects', 'effects/s', 'p50 ms', 'p99 ms', 'not done', ...components.map((c) => `CPU ${c}`)];
  const rows = results.map((r) => [r.ingress, String(r.instances), String(r.effects), r.perSecond.toFixed(0), r.p50.toFixed(1), r.p99.toFixed(1), String(r.notDone), ...components.map((c) => `${((r.cpu[c] ?? 0) * 100).toFixed(0)}%`)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  console.log(`\neffectd throughput — PostgreSQL ledger (synchronous_commit=${synchronousCommit}), payments simulator in its own process, ${WINDOW} commands in flight, ${cpus().length} cores, node ${process.version}, ${new Date().toISOString()}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of rows) console.log(line(row));
  console.log(`\nlatency = submit → answer as the agent sees it (Kafka: publish → outcome consumed; HTTP: POST → response). CPU = share of ONE core used during the measured run (${cpus().length} cores = ${cpus().length * 100}%).`);
  mkdirSync('bench-results', { recursive: true });
  writeFileSync(join('bench-results', `throughput-${RUN}.json`), JSON.stringify({ synchronousCommit, window: WINDOW, results }, null, 2));
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
