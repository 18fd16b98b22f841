// The scale-out measurement's load generator: runs inside the agent host. Closed-loop workers run
// workflows of `steps` payments.charge steps (each step waits for the one before: the workflow
// cache matters) through one door — `http` (POST /v1/effects to the targets in turn: round-robin
// over the instances, or the one proxy) or `kafka` (the SDK's EffectClient, commands keyed by
// workflowId). A command whose answer is not final is resubmitted (the same command). Prints one
// JSON line: effects done inside the measured window [t0 + warmupMs, t0 + warmupMs + measureMs],
// their latency (first submission → final answer) and what it took.
import { setTimeout as sleep } from 'node:timers/promises';
import { EffectClient } from '../../../dist/src/sdk/index.js';

const cfg = JSON.parse(process.env.SCALE_LOAD);
const from = cfg.t0 + cfg.warmupMs;
const until = from + cfg.measureMs;
const FINAL = new Set(['done', 'not_done', 'refused']);

const latencies = [];
// rerouted: steps after the first answered by another instance than the step before (HTTP only:
// which instance consumed a Kafka command is not visible to the client).
const counts = { done: 0, notDone: 0, refused: 0, submissions: 0, resubmissions: 0, rerouted: 0, byAnswer: {} };
const count = (key) => (counts.byAnswer[key] = (counts.byAnswer[key] ?? 0) + 1);

let rr = 0;
async function submitHttp(tenant, command) {
  const i = rr++ % cfg.targets.length;
  const url = cfg.targets[i];
  try {
    const res = await fetch(`${url}/v1/effects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cfg.tokens[tenant]}`, prefer: 'wait=5' },
      body: JSON.stringify(command),
      signal: AbortSignal.timeout(cfg.timeoutMs),
    });
    const body = await res.json().catch(() => ({}));
    const instance = res.headers.get('x-effectd-instance') ?? cfg.targetNames?.[i];
    return { instance, key: `http ${res.status}${body.error ? ` ${body.error}` : ''}`, status: res.status === 200 ? body.status : res.status === 422 || res.status === 400 ? 'refused' : 'unknown' };
  } catch (error) {
    return { key: `http error ${error?.cause?.code ?? error?.name}`, status: 'unknown' };
  }
}

const clients = {};
async function submitKafka(tenant, command) {
  try {
    clients[tenant] ??= EffectClient.connect({ brokers: cfg.bootstrap, token: cfg.tokens[tenant], clientId: `scale-${tenant}`, timeoutMs: cfg.timeoutMs });
    const a = await (await clients[tenant]).submit(command);
    return { key: `kafka ${a.status}${a.error?.code ? ` ${a.error.code}` : ''}`, status: a.status };
  } catch (error) {
    clients[tenant] = undefined;
    return { key: `kafka error ${String(error?.message ?? error).slice(0, 60)}`, status: 'unknown' };
  }
}

async function runCommand(tenant, command) {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const answer = cfg.door === 'kafka' ? await submitKafka(tenant, command) : await submitHttp(tenant, command);
    count(answer.key);
    if (FINAL.has(answer.status) || Date.now() > until + 30_000) return { ...answer, attempt, started, ended: Date.now() };
    await sleep(100);
  }
}

async function worker(tenant, index) {
  for (let n = 0; Date.now() < until; n++) {
    const workflowId = `${cfg.runTag}-${tenant}-${index}-${n}`;
    let lastInstance;
    for (let step = 1; step <= cfg.steps && Date.now() < until; step++) {
      const command = { workflowId, step, tool: 'payments.charge', args: { invoiceId: `${workflowId}.s${step}`, amount: `${10 + step}.00 USD` } };
      const answer = await runCommand(tenant, command);
      if (answer.ended >= from && answer.ended <= until) {
        counts.submissions += answer.attempt;
        counts.resubmissions += answer.attempt - 1;
        if (step > 1 && answer.instance && answer.instance !== lastInstance) counts.rerouted++;
        if (answer.status === 'done') {
          counts.done++;
          latencies.push(answer.ended - answer.started);
        } else if (answer.status === 'not_done') counts.notDone++;
        else if (answer.status === 'refused') counts.refused++;
      }
      lastInstance = answer.instance;
      if (answer.status !== 'done') break;
    }
  }
}

const tenants = Object.keys(cfg.tokens);
await Promise.all(Array.from({ length: cfg.workers }, (_, i) => worker(tenants[i % tenants.length], i)));
latencies.sort((a, b) => a - b);
const pct = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] : null);
console.log(JSON.stringify({ ...counts, effectsPerSecond: counts.done / (cfg.measureMs / 1000), p50: pct(50), p99: pct(99) }));
for (const c of Object.values(clients)) await (await c.catch(() => undefined))?.close?.().catch(() => {});
process.exit(0);
