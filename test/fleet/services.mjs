// The fleet's services, each inside its own host: PostgreSQL primary + streaming standby (Debian's
// binaries, own data dirs), three KRaft brokers (Kafka's jars from Maven Central, as
// scripts/kafka/broker.sh resolves them), the payments simulator, effectd instances.
import { chmodSync, cpSync, createWriteStream, existsSync, mkdirSync, readdirSync, appendFileSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CIDR, execIn, sh, spawnIn } from './net.mjs';

export const REPO = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const PG_BIN = process.env.EFFECTD_FLEET_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const AS_POSTGRES = ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups'];
export const PG_PORT = 5432;
export const KAFKA_PORT = 9092;

/** A child process of the fleet, its output appended to <runDir>/logs/<name>.log. */
export class Proc {
  constructor(name, child, logFile) {
    this.name = name;
    this.child = child;
    this.pid = child.pid;
    this.logFile = logFile;
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    this.alive = true;
    void this.exited.then(() => (this.alive = false));
  }
  signal(sig) {
    try {
      process.kill(this.pid, sig);
      return true;
    } catch {
      return false;
    }
  }
}

export function startProc(runDir, h, name, cmd, args, options = {}) {
  const logFile = join(runDir, 'logs', `${name}.log`);
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawnIn(h, cmd, args, options);
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  return new Proc(name, child, logFile);
}

async function waitUntil(what, probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out (${timeoutMs / 1000} s) waiting for ${what}`);
    await sleep(500);
  }
}

// ------------------------------------------------------------------ PostgreSQL

function pgConf(dir, h, extraConf = '') {
  // The socket outside the data dir: pg_basebackup would otherwise copy the primary's socket lock.
  const sock = `${dir}-sock`;
  mkdirSync(sock, { recursive: true });
  sh('chown', ['postgres:postgres', sock]);
  appendFileSync(join(dir, 'postgresql.conf'), `
# effectd fleet
listen_addresses = '${h.ip}'
port = ${PG_PORT}
unix_socket_directories = '${sock}'
wal_level = replica
max_wal_senders = 8
hot_standby = on
shared_buffers = 32MB
max_connections = 120
synchronous_commit = on
fsync = on
log_line_prefix = '%m [%p] '
${extraConf}
`);
}

/** `extraConf`: more postgresql.conf lines (the scale-out measurement loads pg_stat_statements). */
export async function startPgPrimary(runDir, h, { extraConf = '' } = {}) {
  const dir = join(runDir, h.name);
  mkdirSync(dir, { recursive: true });
  sh('chown', ['postgres:postgres', dir]);
  chmodSync(dir, 0o700);
  sh(AS_POSTGRES[0], [...AS_POSTGRES.slice(1), join(PG_BIN, 'initdb'), '-D', dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8'], { cwd: '/' });
  pgConf(dir, h, extraConf);
  appendFileSync(join(dir, 'pg_hba.conf'), `\nhost all all ${CIDR} trust\nhost replication all ${CIDR} trust\n`);
  const proc = startProc(runDir, h, h.name, AS_POSTGRES[0], [...AS_POSTGRES.slice(1), join(PG_BIN, 'postgres'), '-D', dir], { cwd: '/' });
  await waitUntil(`PostgreSQL on ${h.ip}`, () => psql(h, 'postgres', 'SELECT 1') === '1', 60_000);
  psql(h, 'postgres', "CREATE ROLE effectd LOGIN PASSWORD 'effectd'");
  psql(h, 'postgres', 'CREATE DATABASE effectd OWNER effectd');
  return { host: h, dir, proc };
}

export async function startPgStandby(runDir, h, primary) {
  const dir = join(runDir, h.name);
  mkdirSync(dir, { recursive: true });
  sh('chown', ['postgres:postgres', dir]);
  chmodSync(dir, 0o700);
  execIn(h, AS_POSTGRES[0], [...AS_POSTGRES.slice(1), join(PG_BIN, 'pg_basebackup'), '-h', primary.host.ip, '-p', String(PG_PORT), '-U', 'postgres', '-D', dir, '-R', '-X', 'stream', '-c', 'fast'], { cwd: '/' });
  pgConf(dir, h);
  const proc = startProc(runDir, h, h.name, AS_POSTGRES[0], [...AS_POSTGRES.slice(1), join(PG_BIN, 'postgres'), '-D', dir], { cwd: '/' });
  await waitUntil(`standby on ${h.ip}`, () => psql(h, 'postgres', 'SELECT pg_is_in_recovery()') === 't', 60_000);
  await waitUntil('the standby streaming', () => psql(primary.host, 'postgres', 'SELECT count(*) FROM pg_stat_replication') === '1', 60_000);
  return { host: h, dir, proc };
}

/** psql from the control host (the harness's own namespace, on the bridge). */
export function psql(h, db, sql) {
  return sh('psql', ['-X', '-q', '-tA', '-h', h.ip, '-p', String(PG_PORT), '-U', 'postgres', '-d', db, '-c', sql], { cwd: '/', env: { ...process.env, PGCONNECT_TIMEOUT: '3' } }).trim();
}

export function promote(pg) {
  sh(AS_POSTGRES[0], [...AS_POSTGRES.slice(1), join(PG_BIN, 'pg_ctl'), 'promote', '-D', pg.dir, '-w', '-t', '60'], { cwd: '/' });
}

// ------------------------------------------------------------------ Kafka

function kafkaLib() {
  const own = join(REPO, '.data', 'kafka', 'lib');
  if (existsSync(own) && readdirSync(own).some((f) => f.startsWith('kafka_2.13-'))) return own;
  const from = process.env.EFFECTD_KAFKA_LIB ?? '/work/main/.data/kafka/lib';
  if (existsSync(from)) {
    mkdirSync(join(REPO, '.data', 'kafka'), { recursive: true });
    cpSync(from, own, { recursive: true });
    return own;
  }
  sh('bash', [join(REPO, 'scripts/kafka/broker.sh'), 'prepare'], { stdio: 'inherit' });
  return own;
}

function kafkaJava(lib, runDir, name, heap) {
  return ['java', `-Xms${heap}`, `-Xmx${heap}`, '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:TieredStopAtLevel=1', '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${join(REPO, 'scripts/kafka/log4j2.properties')}`, `-Dkafka.logs.dir=${join(runDir, name)}`, '-cp', `${lib}/*`];
}

export async function startKafka(runDir, hosts, { heap = '256m' } = {}) {
  const lib = kafkaLib();
  const voters = hosts.map((h, i) => `${i + 1}@${h.ip}:9093`).join(',');
  const clusterId = Buffer.from(Array.from({ length: 16 }, (_, i) => (i * 37 + 11) & 0xff)).toString('base64url');
  const brokers = hosts.map((h, i) => {
    const dir = join(runDir, h.name);
    mkdirSync(join(dir, 'data'), { recursive: true });
    const props = join(dir, 'server.properties');
    writeFileSync(props, `process.roles=broker,controller
node.id=${i + 1}
controller.quorum.voters=${voters}
listeners=PLAINTEXT://${h.ip}:${KAFKA_PORT},CONTROLLER://${h.ip}:9093
advertised.listeners=PLAINTEXT://${h.ip}:${KAFKA_PORT}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=${join(dir, 'data')}
default.replication.factor=3
min.insync.replicas=2
offsets.topic.replication.factor=3
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
unclean.leader.election.enable=false
num.partitions=6
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
log.segment.bytes=67108864
`);
    return { host: h, dir, props, name: h.name, proc: undefined };
  });
  await Promise.all(brokers.map((b) => new Promise((resolve, reject) => {
    const p = startProc(runDir, b.host, `${b.name}-format`, kafkaJava(lib, runDir, b.name, '128m')[0], [...kafkaJava(lib, runDir, b.name, '128m').slice(1), 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', b.props]);
    void p.exited.then(({ code }) => (code === 0 ? resolve() : reject(new Error(`kafka format failed on ${b.name} (see ${p.logFile})`))));
  })));
  for (const b of brokers) startBroker(runDir, b, lib, heap);
  return { brokers, lib, heap, bootstrap: hosts.map((h) => `${h.ip}:${KAFKA_PORT}`) };
}

export function startBroker(runDir, b, lib = kafkaLib(), heap = '256m') {
  const java = kafkaJava(lib, runDir, b.name, heap);
  b.proc = startProc(runDir, b.host, b.name, java[0], [...java.slice(1), 'kafka.Kafka', b.props]);
  return b.proc;
}

export async function createTopics(kafkajs, bootstrap) {
  const { Kafka, logLevel } = kafkajs;
  const kafka = new Kafka({ clientId: 'fleet-admin', brokers: bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 500, maxRetryTime: 3000 } });
  const admin = kafka.admin();
  await waitUntil('the Kafka cluster (3 brokers)', async () => {
    await admin.connect();
    const { brokers } = await admin.describeCluster();
    return brokers.length === 3;
  }, 180_000);
  await admin.createTopics({
    waitForLeaders: true, timeout: 60_000,
    topics: [['effectd.commands', 6], ['effectd.outcomes', 6], ['effectd.dlq', 1]].map(([topic, numPartitions]) => ({ topic, numPartitions, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] })),
  });
  await admin.disconnect();
}

// ------------------------------------------------------------------ simulator, effectd

export async function startSimulator(runDir, h) {
  const proc = startProc(runDir, h, 'payments', process.execPath, [join(REPO, 'packages/simulators/dist/main.js'), 'payments', '--host', h.ip, '--port', '8090', '--search-lag-ms', '300', '--seed', '1']);
  const url = `http://${h.ip}:8090`;
  await waitUntil('the payments simulator', async () => (await fetch(`${url}/_admin/health`)).ok, 30_000);
  return { host: h, proc, url };
}

export function writeEffectdConfig(runDir, paymentsUrl, timeoutMs, sagaUrls, name = 'effectd.config.json') {
  const file = join(runDir, name);
  writeFileSync(file, JSON.stringify({
    builtinTools: false,
    providers: { payments: { baseUrl: paymentsUrl } },
    tools: [{
      name: 'payments.charge', provider: 'payments',
      request: { path: '/v1/charges', body: { amount: '{args.amount}', currency: '{args.currency}', metadata: { invoice_id: '{args.invoiceId}' } } },
      args: { invoiceId: { type: 'string' }, amount: { type: 'money', currencyField: 'currency' }, currency: { type: 'currency', default: 'usd' }, description: { type: 'string', optional: true } },
      target: 'invoice {args.invoiceId}', reversibility: 'compensable',
      idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 86_400_000 },
      reference: { kind: 'body-path', path: 'metadata.effectd_ref' },
      businessFields: ['invoiceId', 'amount', 'currency'],
      lookup: { by: 'reference', path: "/v1/charges/search?query=metadata['effectd_ref']:'{ref}'", resultsPath: 'data', receiptPath: 'id' },
      receiptPath: 'id', replayHeader: 'Idempotent-Replayed', timeoutMs, settleWindowMs: 10_000,
    }, ...(sagaUrls ? sagaTools(timeoutMs) : [])],
    ...(sagaUrls ? { providers: { payments: { baseUrl: paymentsUrl }, email: { baseUrl: sagaUrls.email }, travel: { baseUrl: sagaUrls.travel } }, builtinSagas: true } : {}),
  }, null, 2));
  return file;
}

export async function startEffectd(runDir, h, options) {
  const { ledgerUrl, bootstrap, config, env, sabotage } = options;
  const dataDir = join(runDir, h.name);
  mkdirSync(dataDir, { recursive: true });
  const proc = startProc(runDir, h, h.name, process.execPath, [...sabotageArgs(sabotage), join(REPO, 'bin/effectd.js'), 'start', '--host', h.ip, '--port', '8080', '--data-dir', dataDir,
    '--ledger', ledgerUrl, '--kafka', bootstrap.join(','), '--group', 'effectd-fleet', '--config', config],
  { cwd: REPO, env: { ...process.env, EFFECTD_LOG_FORMAT: 'json', EFFECTD_LOG_LEVEL: 'info', ...env, ...(sabotage ? { EFFECTD_SABOTAGE: sabotage } : {}) } });
  const url = `http://${h.ip}:8080`;
  return { host: h, proc, url, dataDir, options, ready: waitUntil(`effectd on ${h.ip}`, async () => (await fetch(`${url}/readyz`)).ok, 180_000) };
}

/** SIGTERM (effectd drains), SIGKILL if it has not exited after `graceMs`; resolves with how it exited. */
export async function stopProc(proc, graceMs = 30_000) {
  if (!proc.alive) return proc.exited;
  proc.signal('SIGCONT');
  proc.signal('SIGTERM');
  const timer = setTimeout(() => proc.signal('SIGKILL'), graceMs);
  const how = await proc.exited;
  clearTimeout(timer);
  return how;
}

/** Starts an effectd again on its host, data dir and options (`changes` merged in), as an orchestrator would. */
export function restartEffectd(runDir, e, changes = {}) {
  return startEffectd(runDir, e.host, { ...e.options, ...changes, env: { ...e.options.env, ...changes.env } });
}

export function tail(file, lines = 20) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

// ------------------------------------------------------------------ sagas, lost replies, sabotage (fleet-checker)

/** The saga's other providers on the sim host, beside payments: email (the irreversible step) and travel. */
export async function startSagaSimulators(runDir, h) {
  const urls = {};
  for (const [kind, port] of [['email', 8091], ['travel', 8092]]) {
    startProc(runDir, h, kind, process.execPath, [join(REPO, 'packages/simulators/dist/main.js'), kind, '--host', h.ip, '--port', String(port), '--seed', '1']);
    urls[kind] = `http://${h.ip}:${port}`;
    await waitUntil(`the ${kind} simulator`, async () => (await fetch(`${urls[kind]}/_admin/health`)).ok, 30_000);
  }
  // A saga whose traveller's address contains "bounce" fails at its irreversible step (a 422, a proven
  // failure), so its committed steps are compensated in reverse order.
  await adminFaults(urls.email, [{ match: { method: 'POST', pathPrefix: '/emails', bodyIncludes: 'bounce', times: 1_000_000 }, action: { type: 'status', status: 422 } }]);
  return urls;
}

/** The trip-booking and subscription-renewal sagas' tools (config/builtin-tools.json), with the fleet's timeout. */
function sagaTools(timeoutMs) {
  const builtin = JSON.parse(readFileSync(join(REPO, 'config/builtin-tools.json'), 'utf8'));
  const names = ['payments.refund', 'email.send', 'travel.hold-flight', 'travel.release-hold', 'travel.book-hotel', 'travel.cancel-booking'];
  return builtin.tools.filter((t) => names.includes(t.name)).map((t) => ({ ...t, timeoutMs, settleWindowMs: Math.min(t.settleWindowMs ?? 10_000, 10_000) }));
}

/**
 * Lost replies at the provider: every `every`-th charge commits and its reply is lost (the socket
 * destroyed), so effectd must find out by lookup — while the search lags behind the write. This is
 * the path a "not found taken as absence" defect breaks.
 */
export async function loseChargeReplies(paymentsUrl, { every = 40, count = 200 } = {}) {
  const rules = Array.from({ length: count }, (_, i) => ({ match: { method: 'POST', pathPrefix: '/v1/charges', nth: every * (i + 1), times: 1 }, action: { type: 'drop-after-mutation' } }));
  await adminFaults(paymentsUrl, rules);
}

async function adminFaults(url, rules) {
  const res = await fetch(`${url}/_admin/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules }) });
  if (!res.ok) throw new Error(`${url}/_admin/faults answered ${res.status}: ${await res.text()}`);
}

function sabotageArgs(kind) {
  return kind ? ['--import', join(REPO, 'test/fleet/sabotage/hook.mjs')] : [];
}
