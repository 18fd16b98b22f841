// One cell of the scale-out table: one lane against the instances running now. The load generator
// runs in the agent host; at the start and the end of its measured window the harness scrapes
// every instance's /metrics, PostgreSQL's pg_stat_statements (the ledger's statements, by kind)
// and the instances' cgroup cpu.stat, and turns the differences into per-effect rates.
//
// effectd exports no counter of append conflicts nor of workflow-cache hits and misses (only the
// cache's size: effectd_workflow_cache_streams/effects), so:
//  - conflicts are derived from the routing the load generator saw: a step answered by another
//    instance than the workflow's previous step meets a stale cache there, and by the warm-cache rule
//    (src/shell/workflow-store.ts) its first append names a revision the stream has moved past —
//    one conflict, one stream read, a second decision and append (lost races besides are not seen);
//  - cache misses are read off the ledger's statements (pg_stat_statements): every stream read is
//    the cache catching up. Reads in flight together go in one readStreams statement, so under load
//    "reads" counts round trips: a lower bound on stream reads. Appends likewise (group commit).
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWriteStream } from 'node:fs';
import { psql, REPO } from '../services.mjs';
import { spawnIn } from '../net.mjs';

function statementKind(query) {
  if (/^\s*INSERT INTO/i.test(query) && query.includes('jsonb_to_recordset')) return 'append';
  if (query.includes('FROM unnest(') && query.includes('CROSS JOIN LATERAL')) return 'reads'; // readStreams
  if (/WHERE stream = \$1 AND revision > \$2/.test(query)) return 'reads'; // readStream
  return 'other';
}

function ledgerStatements(pg) {
  const rows = psql(pg, 'effectd', "SELECT calls, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'effectd')");
  const sums = { append: 0, reads: 0, other: 0 };
  for (const line of rows.split('\n').filter(Boolean)) {
    const bar = line.indexOf('|');
    sums[statementKind(line.slice(bar + 1))] += Number(line.slice(0, bar));
  }
  return sums;
}

async function scrapeMetrics(instances) {
  const per = {};
  await Promise.all(instances.map(async (e) => {
    const text = await (await fetch(`${e.url}/metrics`, { signal: AbortSignal.timeout(15_000) })).text();
    const sum = (name) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    per[e.host.name] = { received: sum('effectd_commands_received_total'), replays: sum('effectd_replays_total'), cacheStreams: sum('effectd_workflow_cache_streams') };
  }));
  return per;
}

async function snapshot(ctx) {
  const [metrics] = await Promise.all([scrapeMetrics(ctx.instances)]);
  return { metrics, statements: ledgerStatements(ctx.pg), cpu: ctx.cpu(), load1: loadavg()[0] };
}

function runLoad(ctx, cfg) {
  const out = createWriteStream(join(ctx.runDir, 'logs', `load-${cfg.runTag}.log`));
  const child = spawnIn(ctx.agent, process.execPath, [join(REPO, 'test/fleet/scale/load.mjs')], { cwd: REPO, env: { ...process.env, SCALE_LOAD: JSON.stringify(cfg) } });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.pipe(out);
  return new Promise((resolve, reject) => child.once('exit', (code) => {
    const last = stdout.trim().split('\n').pop();
    if (code === 0 && last?.startsWith('{')) resolve(JSON.parse(last));
    else reject(new Error(`the load generator (${cfg.runTag}) exited ${code}: ${stdout.slice(-300)} (see ${out.path})`));
  }));
}

/** Runs one lane; returns its row of the table. */
export async function cell(ctx) {
  const { lane, instances, proxy, kafka, tokens, load } = ctx;
  const n = instances.length;
  const runTag = `n${n}-${lane}-${Date.now().toString(36)}`;
  const t0 = Date.now() + 500;
  const rr = lane === 'http-rr';
  const targets = rr ? instances.map((e) => e.url) : [proxy.url];
  const door = lane === 'kafka' ? 'kafka' : 'http';
  const result = runLoad(ctx, { runTag, t0, door, targets, targetNames: rr ? instances.map((e) => e.host.name) : undefined, bootstrap: kafka.bootstrap, tokens, timeoutMs: 15_000,
    ...load, workers: door === 'kafka' ? load.kafkaWorkers : load.workers });
  await sleep(t0 + load.warmupMs - Date.now());
  const before = await snapshot(ctx);
  await sleep(t0 + load.warmupMs + load.measureMs - Date.now());
  const after = await snapshot(ctx);
  const r = await result;

  const delta = (f) => f(after) - f(before);
  const received = delta((s) => Object.values(s.metrics).reduce((a, m) => a + m.received, 0));
  const appends = delta((s) => s.statements.append);
  const reads = delta((s) => s.statements.reads);
  const perInstance = instances.map((e) => delta((s) => s.metrics[e.host.name].received));
  const throttled = instances.map((e) => {
    const periods = delta((s) => s.cpu[e.host.name].nr_periods);
    return periods ? delta((s) => s.cpu[e.host.name].nr_throttled) / periods : 0;
  });
  const throttledNs = instances.map((e) => delta((s) => s.cpu[e.host.name].throttled_time));
  const effects = r.done || 1;
  const row = {
    lane, effectsPerSecond: r.effectsPerSecond, p50: r.p50, p99: r.p99, done: r.done, notDone: r.notDone, refused: r.refused,
    resubmitsPerEffect: r.resubmissions / effects,
    conflictsPerEffect: door === 'http' ? r.rerouted / effects : null,
    appendsPerEffect: appends / effects, readsPerEffect: reads / effects,
    // HTTP: the steps that met a warm, current cache; Kafka (routing not visible): 1 − read statements per command
    cacheHitRate: door === 'http' ? 1 - r.rerouted / effects : received ? Math.max(0, 1 - reads / received) : null,
    commandsReceived: received, commandsPerInstance: perInstance,
    throttledShare: throttled.reduce((a, b) => a + b, 0) / n, throttledNs,
    load1: after.load1, answers: r.byAnswer,
  };
  ctx.log(`${n} × ${lane}: ${row.effectsPerSecond.toFixed(1)} effects/s, p50 ${row.p50} ms, p99 ${row.p99} ms; ${row.conflictsPerEffect?.toFixed(2) ?? '?'} conflicts (rerouted steps), ${row.appendsPerEffect.toFixed(2)} appends, ${row.readsPerEffect.toFixed(2)} reads, ${row.resubmitsPerEffect.toFixed(3)} resubmits per effect; commands per instance ${perInstance.join('/')}; throttled ${(row.throttledShare * 100).toFixed(0)}% of periods; load ${row.load1.toFixed(2)}; answers ${JSON.stringify(r.byAnswer)}`);
  return row;
}

export function printTable(rows) {
  const head = ['instances', 'lane', 'effects/s', 'p50 ms', 'p99 ms', 'conflicts/eff', 'reads/eff', 'appends/eff', 'cache hit', 'resubmits/eff', 'throttled', 'load1'];
  const lines = rows.map((r) => [String(r.instances), r.lane, r.effectsPerSecond.toFixed(1), String(r.p50 ?? '-'), String(r.p99 ?? '-'), r.conflictsPerEffect === null ? 'n/a' : r.conflictsPerEffect.toFixed(2),
    r.readsPerEffect.toFixed(2), r.appendsPerEffect.toFixed(2), r.cacheHitRate === null ? '-' : `${(r.cacheHitRate * 100).toFixed(1)}%`, r.resubmitsPerEffect.toFixed(3), `${(r.throttledShare * 100).toFixed(0)}%`, r.load1.toFixed(2)]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) => `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  console.log(fmt(head));
  console.log(`|${widths.map((w, i) => (i < 2 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const l of lines) console.log(fmt(l));
}
