// The fleet's load generator: runs inside the agent host. Workers (several tenants, HTTP and Kafka)
// run workflows of payments.charge steps and resubmit the SAME command while the answer is not
// final (unknown, 409, 503, a timeout, a refused connection), as docs/http-api.md tells agents to:
// the same command is answered from the ledger, never sent twice. Every invocation and every
// answer goes to the history file (JSON lines) the checker reads.
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { EffectClient } from '../../dist/src/sdk/index.js';

const cfg = JSON.parse(process.env.FLEET_AGENT);
const t0 = cfg.t0;
const now = () => Date.now() - t0;
const submitUntil = t0 + cfg.submitMs;
const resubmitUntil = t0 + cfg.submitMs + cfg.settleMs;

function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
const random = rng(cfg.seed * 7919 + 17);
const lines = [];
function record(entry) {
  lines.push(JSON.stringify({ t: now(), ...entry }));
  if (lines.length >= 20) flush();
}
function flush() {
  if (lines.length) appendFileSync(cfg.historyFile, `${lines.splice(0).join('\n')}\n`);
}
setInterval(flush, 500).unref();

const kafkaClients = {};
async function kafkaClient(tenant) {
  kafkaClients[tenant] ??= EffectClient.connect({ brokers: cfg.bootstrap, token: cfg.tokens[tenant], clientId: `fleet-agent-${tenant}`, timeoutMs: cfg.kafkaTimeoutMs });
  return kafkaClients[tenant];
}

let rr = 0;
async function submitHttp(tenant, command) {
  const url = cfg.effectd[rr++ % cfg.effectd.length];
  try {
    const res = await fetch(`${url}/v1/effects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cfg.tokens[tenant]}`, prefer: 'wait=2' },
      body: JSON.stringify(command),
      signal: AbortSignal.timeout(cfg.httpTimeoutMs),
    });
    const text = await res.text();
    let body = {};
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    if (res.status === 200) return { via: url, http: 200, status: body.status, receipt: body.receipt, effectId: body.effectId, state: body.state };
    if (res.status === 409) return { via: url, http: 409, status: 'unknown', effectId: body.effectId };
    if (res.status === 400 || res.status === 401 || res.status === 403 || res.status === 422) return { via: url, http: res.status, status: 'refused', error: body.error, recorded: body.recorded?.status };
    return { via: url, http: res.status, status: 'unknown', error: body.error ?? text.slice(0, 120), effectId: body.effectId };
  } catch (error) {
    return { via: url, http: 0, status: 'unknown', error: String(error?.cause?.code ?? error?.name ?? error) };
  }
}
async function submitKafka(tenant, command) {
  try {
    const client = await kafkaClient(tenant);
    const a = await client.submit(command);
    return { via: 'kafka', status: a.status, receipt: a.receipt, effectId: a.effectId, state: a.state, error: a.error?.code ?? (a.noAnswer ? `no answer (accepted: ${a.accepted})` : undefined), recorded: a.error?.recorded?.status };
  } catch (error) {
    kafkaClients[tenant] = undefined;
    return { via: 'kafka', status: 'unknown', error: String(error?.message ?? error).slice(0, 120) };
  }
}

const FINAL = new Set(['done', 'not_done', 'refused']);

/** One command until its answer is final (or the run's end): the same command every time. */
async function runCommand(tenant, door, op) {
  const command = { workflowId: op.wf, step: op.step, tool: 'payments.charge', args: { invoiceId: op.invoiceId, amount: op.amount }, ...(op.repeat ? { repeat: { reason: 'the customer asked for a second charge' } } : {}) };
  let backoff = 300;
  for (let attempt = 1; ; attempt++) {
    record({ type: 'invoke', tenant, door, ...op, attempt });
    const answer = door === 'http' ? await submitHttp(tenant, command) : await submitKafka(tenant, command);
    record({ type: 'answer', tenant, door, ...op, attempt, ...answer });
    if (FINAL.has(answer.status)) return answer;
    if (Date.now() > resubmitUntil) return answer;
    await sleep(backoff);
    backoff = Math.min(backoff * 2, 3_000);
  }
}

/** A worker keeps to one door, so that a fault on one door does not stall the other's load. */
async function worker(tenant, index, door) {
  let n = 0;
  while (Date.now() < submitUntil) {
    const wf = `wf-${cfg.seed}-${tenant}-${index}-${n++}`;
    const repeatAt = random() < 0.2 ? 3 : 0;
    for (let step = 1; step <= 3 && Date.now() < submitUntil; step++) {
      const repeat = step === repeatAt;
      const invoiceStep = repeat ? step - 1 : step;
      const op = { wf, step, invoiceId: `${tenant}.${wf}.s${invoiceStep}`, amount: `${10 + invoiceStep}.00 USD`, repeat };
      let answer = await runCommand(tenant, door, op);
      // not_done means it did not happen: the agent decides again, as a NEW step with the same
      // intent (the content index offers one only after a proof of absence). One charge is meant.
      if (answer.status === 'not_done') answer = await runCommand(tenant, door, { ...op, step: 10 + step, retryOf: step });
      if (answer.status !== 'done') break;
    }
  }
}

// ---------------------------------------------------------------- sagas
// trip-booking: hold a flight, book a hotel, charge the card (compensable), email the itinerary
// (irreversible). One trip in four goes to an address the email provider refuses (422): a proven
// failure of the irreversible step, so the three committed steps are compensated in reverse order.
// The start is resubmitted — the same workflowId and input — while the saga is not finished, as
// docs/sagas.md says (idempotent on the workflowId).
const SAGA_FINAL = new Set(['completed', 'compensated', 'compensation_failed']);
async function startSagaHttp(tenant, body) {
  const url = cfg.effectd[rr++ % cfg.effectd.length];
  try {
    const res = await fetch(`${url}/v1/sagas`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cfg.tokens[tenant]}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(cfg.httpTimeoutMs * 2),
    });
    const text = await res.text();
    let view = {};
    try {
      view = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    if (res.ok) return { via: url, http: res.status, sagaStatus: view.status, status: view.status === 'completed' ? 'done' : view.status === 'compensated' ? 'not_done' : SAGA_FINAL.has(view.status) ? 'refused' : 'unknown', why: view.why, steps: (view.steps ?? []).map((s) => ({ name: s.name, state: s.state, receipt: s.receipt, compensation: s.compensation?.state })) };
    if (res.status === 400 || res.status === 401 || res.status === 403 || res.status === 422) return { via: url, http: res.status, status: 'refused', error: view.error ?? text.slice(0, 120) };
    return { via: url, http: res.status, status: 'unknown', error: view.error ?? text.slice(0, 120) };
  } catch (error) {
    return { via: url, http: 0, status: 'unknown', error: String(error?.cause?.code ?? error?.name ?? error) };
  }
}

async function sagaWorker(tenant, index) {
  let n = 0;
  while (Date.now() < submitUntil) {
    const wf = `trip-${cfg.seed}-${tenant}-${index}-${n++}`;
    const bounce = random() < 0.25;
    const input = { tripId: wf, traveller: { name: `Traveller ${n}`, email: `${bounce ? 'bounce' : 'ok'}.${wf}@example.com` }, flight: `TP${1000 + (n % 9000)}`, date: '2027-03-14', hotel: 'Hotel Lisboa', nights: 1 + (n % 4), amount: '640.00' };
    const op = { kind: 'saga', saga: 'trip-booking', wf, step: 'saga', invoiceId: `TRIP-${wf}`, expect: bounce ? 'compensated' : 'completed' };
    let backoff = 300;
    for (let attempt = 1; ; attempt++) {
      record({ type: 'invoke', tenant, door: 'http', ...op, attempt });
      const answer = await startSagaHttp(tenant, { saga: 'trip-booking', workflowId: wf, input });
      record({ type: 'answer', tenant, door: 'http', ...op, attempt, ...answer });
      if (FINAL.has(answer.status) || Date.now() > resubmitUntil) break;
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 3_000);
    }
  }
}

const workers = [];
for (const tenant of Object.keys(cfg.tokens)) for (let i = 0; i < (cfg.sagaWorkersPerTenant ?? 0); i++) workers.push(sagaWorker(tenant, i));
for (const tenant of Object.keys(cfg.tokens)) {
  for (let i = 0; i < cfg.workersPerTenant; i++) workers.push(worker(tenant, i, 'http'));
  for (let i = 0; i < cfg.kafkaWorkersPerTenant; i++) workers.push(worker(tenant, cfg.workersPerTenant + i, 'kafka'));
}
await Promise.all(workers);
flush();
for (const c of Object.values(kafkaClients)) await (await c)?.close?.().catch(() => {});
process.exit(0);
