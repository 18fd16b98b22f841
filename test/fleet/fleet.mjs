// npm run fleet -- --seed N --minutes M [--profile full|short]
// Builds the fleet (a host per process: PostgreSQL primary + standby, three KRaft brokers, the
// payments simulator, three effectd instances, the agents), plays the seeded nemesis schedule
// while the agents run, heals, lets the agents resubmit until the settle period ends, checks the
// history against the provider's oracle and the ledger, prints the summary and the verdict, and
// tears everything down (also on failure or Ctrl-C). docs/fleet.md says more.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs from 'kafkajs';
import * as net from './net.mjs';
import * as svc from './services.mjs';
import { PROFILES, schedule } from './nemesis.mjs';
import { play, prepare } from './faults.mjs';
import * as toxiproxy from './toxiproxy.mjs';
import { check } from './checker.mjs';
import { readLedger } from './ledger-history.mjs';
import { checkOnDisk as sabotageProblem } from './sabotage/kinds.mjs';

const { values } = parseArgs({ options: { seed: { type: 'string', default: '1' }, minutes: { type: 'string' }, profile: { type: 'string', default: 'full' }, short: { type: 'boolean' }, cleanup: { type: 'boolean' }, keep: { type: 'boolean' }, sabotage: { type: 'string' } } });
if (values.cleanup) {
  net.destroyAll((m) => console.log(`[fleet] ${m}`));
  process.exit(0);
}
// --sabotage <kind>: effectd runs a deliberately broken build (test/fleet/sabotage/), to show the checker fails.
if (values.sabotage) {
  const problem = sabotageProblem(values.sabotage);
  if (problem) {
    console.error(`[fleet] ${problem.message}`);
    process.exit(2);
  }
}
const seed = Number(values.seed);
const profile = values.short ? 'short' : values.profile;
if (!PROFILES[profile]) throw new Error(`--profile ${profile}: use ${Object.keys(PROFILES).join(' or ')}`);
// short: what CI runs, ≤ 4 minutes of wall time with the build and the teardown; full: one round of every kind.
const minutes = Number(values.minutes ?? (profile === 'short' ? 2.25 : 7));
const runId = `run-${seed}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
const runDir = join(svc.REPO, '.data', 'fleet', runId);
mkdirSync(join(runDir, 'logs'), { recursive: true });
const eventsFile = join(runDir, 'nemesis.jsonl');
let t0 = Date.now();
const since = () => ((Date.now() - t0) / 1000).toFixed(1).padStart(6);
const log = (m) => console.log(`[fleet ${since()}s] ${m}`);
const faultLog = (entry) => {
  writeFileSync(eventsFile, `${JSON.stringify({ t: Date.now() - t0, ...entry })}\n`, { flag: 'a' });
  log(`${entry.action.padEnd(5)} ${entry.label}${entry.note ? ` — ${entry.note}` : ''}`);
};

let tornDown = false;
function teardown() {
  if (tornDown) return;
  tornDown = true;
  net.destroyAll((m) => log(m));
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { log(`${sig}: tearing down`); teardown(); process.exit(130); });
process.on('exit', teardown);

const H = {
  pg1: net.host('pg1', 11), pg2: net.host('pg2', 12),
  k1: net.host('k1', 21), k2: net.host('k2', 22), k3: net.host('k3', 23),
  e1: net.host('e1', 31), e2: net.host('e2', 32), e3: net.host('e3', 33),
  sim: net.host('sim', 40), agent: net.host('agent', 50),
};

try {
  net.destroyAll((m) => log(`leftover: ${m}`));
  log(`seed ${seed}, profile ${profile}, ${minutes} min, run dir ${runDir}`);
  net.createBridge();
  for (const h of Object.values(H)) net.createHost(h);
  log(`hosts: ${Object.values(H).map((h) => `${h.name}=${h.ip}`).join(' ')}`);

  const kafkaP = svc.startKafka(runDir, [H.k1, H.k2, H.k3]);
  const pg1 = await svc.startPgPrimary(runDir, H.pg1);
  const pg2 = await svc.startPgStandby(runDir, H.pg2, pg1);
  log('PostgreSQL primary pg1 + streaming standby pg2 up');
  const sim = await svc.startSimulator(runDir, H.sim);
  const sagaSims = await svc.startSagaSimulators(runDir, H.sim);
  const kafka = await kafkaP;
  await svc.createTopics(kafkajs, kafka.bootstrap);
  log(`Kafka: 3 KRaft brokers, topics RF 3, min.insync.replicas 2 (${kafka.bootstrap.join(',')})`);

  const tokens = Object.fromEntries(['t1', 't2', 't3'].map((t) => [t, `efd_agent_${t}_${randomBytes(16).toString('hex')}`]));
  const operatorToken = `efd_operator_${randomBytes(16).toString('hex')}`;
  const credFile = join(runDir, 'credentials.json');
  writeFileSync(credFile, JSON.stringify({ credentials: [...Object.entries(tokens).map(([tenant, token]) => ({ token, role: 'agent', tenant, name: `agent-${tenant}` })), { token: operatorToken, role: 'operator', tenant: '*', name: 'fleet-operator' }] }), { mode: 0o600 });
  const toolTimeoutMs = 3_000;
  const totalMs = minutes * 60_000;
  const settleMs = Math.min(60_000, Math.max(30_000, totalMs * 0.25));
  const submitMs = totalMs - settleMs;
  const plan = schedule(seed, { startMs: profile === 'short' ? 10_000 : 15_000, endMs: submitMs - 5_000, profile });
  // With a slow-link or broken-link in the plan, every effectd reaches PostgreSQL and the payments
  // provider through a Toxiproxy of its own host; without (the short profile), directly, and nothing is built with Go.
  const toxi = {};
  const fleetLedgerUrl = `postgres://effectd:effectd@${H.pg1.ip}:5432,${H.pg2.ip}:5432/effectd?target_session_attrs=read-write`; // as the control host reaches it
  let ledgerUrl = fleetLedgerUrl;
  let paymentsUrl = sim.url;
  if (plan.some((f) => f.kind === 'slow-link' || f.kind === 'broken-link')) {
    for (const name of ['e1', 'e2', 'e3']) {
      toxi[name] = await toxiproxy.start(runDir, H[name], { pg1: { listen: 15431, upstream: `${H.pg1.ip}:5432` }, pg2: { listen: 15432, upstream: `${H.pg2.ip}:5432` }, payments: { listen: 18090, upstream: `${H.sim.ip}:8090` } });
    }
    log(`Toxiproxy ${toxiproxy.VERSION} in e1 e2 e3: 127.0.0.1:15431 → pg1, :15432 → pg2, :18090 → sim`);
    ledgerUrl = 'postgres://effectd:effectd@127.0.0.1:15431,127.0.0.1:15432/effectd?target_session_attrs=read-write';
    paymentsUrl = 'http://127.0.0.1:18090';
  }
  const config = svc.writeEffectdConfig(runDir, paymentsUrl, toolTimeoutMs, sagaSims);
  // what rolling-restart changes on one instance: the tool timeout, which is its lease
  const changedConfig = { what: 'payments.charge timeoutMs 5000 (the lease) and EFFECTD_KAFKA_MAX_IN_FLIGHT=4', changes: { config: svc.writeEffectdConfig(runDir, paymentsUrl, 5_000, sagaSims, 'effectd.config.changed.json'), env: { EFFECTD_KAFKA_MAX_IN_FLIGHT: '4' } } };
  const env = { EFFECTD_SECRET: randomBytes(32).toString('hex'), EFFECTD_CREDENTIALS: credFile };
  const effectd = {};
  for (const name of ['e1', 'e2', 'e3']) effectd[name] = await svc.startEffectd(runDir, H[name], { ledgerUrl, bootstrap: kafka.bootstrap, config, env, sabotage: values.sabotage });
  await Promise.all(Object.values(effectd).map((e) => e.ready));
  log(`effectd e1 e2 e3 ready (ledger ${ledgerUrl})${values.sabotage ? `, SABOTAGED: ${values.sabotage}` : ''}`);
  await svc.loseChargeReplies(sim.url);
  log('payments: every 40th charge commits and loses its reply (effectd settles it by lookup)');

  // ---------------------------------------------------------------- the run
  console.log(`\nschedule (seed ${seed}, profile ${profile}): load ${submitMs / 1000} s, then heal and settle ${settleMs / 1000} s`);
  for (const f of plan) console.log(`  t+${String(f.at / 1000).padStart(4)}s  ${f.label.padEnd(34)} held ${f.holdMs / 1000} s`);
  console.log('');

  t0 = Date.now();
  const historyFile = join(runDir, 'history.jsonl');
  const agent = svc.startProc(runDir, H.agent, 'agent', process.execPath, [join(svc.REPO, 'test/fleet/agent.mjs')], {
    cwd: svc.REPO,
    env: { ...process.env, FLEET_AGENT: JSON.stringify({ t0, seed, submitMs, settleMs, historyFile, tokens, effectd: Object.values(effectd).map((e) => e.url), bootstrap: kafka.bootstrap, sagaWorkersPerTenant: 1, workersPerTenant: 2, kafkaWorkersPerTenant: 1, httpTimeoutMs: 8_000, kafkaTimeoutMs: 10_000 }) },
  });
  log(`agents started (3 tenants × (2 HTTP + 1 Kafka) workers; history ${historyFile})`);

  const faults = [];
  const fleet = { runDir, H, effectd, kafka, pg: { primary: pg1, standby: pg2 }, toxiproxy: toxi, changedConfig, toolTimeoutMs, faultLog, log };
  for (const f of plan) {
    const prepared = prepare(fleet, f);
    const wait = f.at - (Date.now() - t0);
    if (wait > 0) await sleep(wait);
    const entry = { label: f.label, startAt: Date.now() - t0 };
    faults.push(entry);
    const healed = await play(fleet, f, await prepared);
    entry.healAt = Date.now() - t0;
    faultLog({ action: 'heal', label: f.label, note: healed });
  }
  const healAt = Date.now() - t0;
  log('every fault healed; agents keep resubmitting until the settle period ends');
  await agent.exited;
  const endAt = Date.now() - t0;
  log('agents finished');

  // ---------------------------------------------------------------- check
  const oracle = await (await fetch(`${sim.url}/_oracle/state`)).json();
  const open = [];
  const summary = {};
  // effectd's own view of what is still open (the oracle and the history are the ground truth; this is the ledger's word)
  for (const state of ['dispatching', 'unknown', 'escalated', 'terminal_failure']) {
    for (const e of Object.values(effectd)) {
      try {
        const res = await fetch(`${e.url}/v1/effects?state=${state}&limit=1000`, { headers: { authorization: `Bearer ${operatorToken}` }, signal: AbortSignal.timeout(10_000) });
        if (!res.ok) continue;
        const body = await res.json();
        const items = body.effects ?? body.items ?? [];
        summary[state] = items.length;
        for (const i of items) open.push({ effectId: i.effectId, state, workflowId: i.workflowId, step: i.step });
        break;
      } catch {
        /* next instance */
      }
    }
  }
  const sagaOracles = { email: await (await fetch(`${sagaSims.email}/_oracle/state`)).json(), travel: await (await fetch(`${sagaSims.travel}/_oracle/state`)).json() };
  let ledgerEvents;
  try {
    ledgerEvents = await readLedger(fleetLedgerUrl, runDir);
    log(`ledger: ${ledgerEvents.length} events read from the primary that takes writes`);
    writeFileSync(join(runDir, 'ledger.jsonl'), ledgerEvents.map((e) => JSON.stringify(e)).join('\n'));
  } catch (error) {
    log(`ledger: not readable (${error?.message ?? error}); its anomalies are not checked`);
  }
  writeFileSync(join(runDir, 'oracle.json'), JSON.stringify({ payments: oracle, ...sagaOracles }));
  const history = readFileSync(historyFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const result = check({ history, charges: oracle.charges ?? [], refunds: oracle.refunds ?? [], sagaOracles, ledger: { open, summary, events: ledgerEvents }, faults, healAt, endAt });
  writeFileSync(join(runDir, 'result.json'), JSON.stringify(result, null, 2));

  console.log(`\n==================== fleet run, seed ${seed}, ${minutes} min${values.sabotage ? `, SABOTAGE ${values.sabotage}` : ''} ====================`);
  console.log(`operations: ${result.operations.commands} commands, ${result.operations.invokes} submissions, ${result.operations.answers} answers, ${result.operations.finals} final`);
  console.log(`answers:    ${Object.entries(result.operations.statusCount).map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  console.log(`provider:   ${result.provider.charges} charges for ${result.provider.invoices} invoices`);
  console.log(`ledger:     open effects after the settle period: ${Object.entries(summary).map(([k, v]) => `${k}: ${v}`).join(', ') || 'not reachable'}`);
  if (result.sagas) console.log(`sagas:      ${Object.entries(result.sagas).map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  if (result.ledgerEvents !== undefined) console.log(`ledger:     ${result.ledgerEvents} events checked (claims, saga order, compensation order)`);
  console.log(`faults:     ${result.faults}`);
  console.log('unavailability per fault (longest stretch of the fault with no done answer, per door):');
  for (const w of result.windows) console.log(`  ${w.fault.padEnd(24)} ${(w.from / 1000).toFixed(1).padStart(6)}–${(w.to / 1000).toFixed(1).padEnd(6)} s: ${String(w.answers).padStart(4)} answers, ${String(w.done).padStart(4)} done, ${String(w.notFinal).padStart(3)} not final; http ${(w.http.longestGapMs / 1000).toFixed(1)} s, kafka ${(w.kafka.longestGapMs / 1000).toFixed(1)} s`);
  console.log(`settled:    last final answer ${(result.settleAfterHealMs / 1000).toFixed(1)} s after the last heal`);
  console.log(`anomalies:  ${Object.keys(result.anomaliesByKind).length ? Object.entries(result.anomaliesByKind).map(([k, v]) => `${k}: ${v}`).join(', ') : 'none'}`);
  for (const a of result.anomalies.slice(0, 15)) console.log(`  ${JSON.stringify(a)}`);
  console.log(`history, schedule, logs: ${runDir}`);
  console.log(`\nverdict: ${result.valid ? 'VALID (no anomaly)' : 'INVALID'}`);
  teardown();
  process.exit(result.valid ? 0 : 1);
} catch (error) {
  console.error(`[fleet] FAILED: ${error?.stack ?? error}`);
  console.error(`logs: ${runDir}/logs`);
  teardown();
  process.exit(2);
}
