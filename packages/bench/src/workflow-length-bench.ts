/**
 * Workflow-length benchmark (not a test): does the cost of an effect grow with its workflow?
 * For each ledger (embedded SQLite, PostgreSQL in a fresh schema), with effectd as its own process
 * (`bin/effectd.js start`) and the payments simulator as the provider (one effect = one POST
 * /v1/charges), all measured at the client over HTTP (`POST /v1/effects`), in one run:
 *   1. one workflow with N sequential effects (step i = i): p50/p99 per effect for steps 101–200
 *      and for the last 100 steps, and last p50 / early p50 (target ≤ 1.5×);
 *   2. beside it, 200 one-effect workflows sequentially (before and after the long workflow);
 *   3. 200 concurrent steps in ONE workflow vs 200 one-effect workflows concurrently: wall time of
 *      each and their ratio (target ≤ 2×). Steps of one workflow contend on the stream's revision by
 *      design: an answer that says "retry after" (503 contention) is followed, as an agent would, and
 *      counted; every final non-done answer (409s, 5xx…) is counted too;
 *   4. RSS of a fresh effectd process (/proc/<pid>/status) before and after E effects over E/10
 *      workflows (10 steps each, bounded concurrency), with the workflow cache setting and metrics.
 *
 *   npm run bench:workflow-length [-- --quick | --steps 10000 --ledgers sqlite,postgres --rss-effects 100000]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { sleep } from './bench-http.js';
import { latencySummary } from './scoring.js';
import { spawnEffectdProcess, type EffectdProcess } from './harness/effectd-process.js';
import { spawnSimulator, type SimulatorProcess } from '@effectd/simulators';
import { writeFastPaymentsConfig } from './harness/tool-config-files.js';
import { packageRoot } from '../../../src/shared/package-root.js';
import { pgScalar } from './pg-scalar.js';

const USAGE = `Usage: npm run bench:workflow-length -- [options]
  --steps N          effects in the one long sequential workflow (default 10000; at least 200)
  --ledgers L        comma-separated: sqlite,postgres (default both)
  --rss-effects N    effects of the RSS phase, 10 per workflow (default 100000)
  --rss-concurrency C  workflows driven at once in the RSS phase (default 32)
  --concurrent N     size of the concurrent comparison (default 200)
  --baseline N       one-effect workflows run sequentially beside the long one (default 200)
  --retries N        how often one effect follows effectd's "retry after" answer (e.g. 503 contention) before that answer counts as final (default 20; 0: never)
  --cache N          sets EFFECTD_WORKFLOW_CACHE for the effectd processes (default: inherited, else effectd's own default)
  --pg URL           PostgreSQL (default EFFECTD_TEST_PG_URL or the services:up database effectd_test)
  --quick            --steps 1000 --rss-effects 10000 (explicit flags win)
  -h, --help         this text
Needs PostgreSQL for the postgres ledger: npm run services:up. Writes test-artifacts/bench-workflow-length.json.`;

const { values } = parseArgs({ options: {
  steps: { type: 'string' },
  ledgers: { type: 'string', default: 'sqlite,postgres' },
  'rss-effects': { type: 'string' },
  'rss-concurrency': { type: 'string', default: '32' },
  concurrent: { type: 'string', default: '200' },
  baseline: { type: 'string', default: '200' },
  cache: { type: 'string' },
  retries: { type: 'string', default: '20' },
  pg: { type: 'string' },
  quick: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} });
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const positive = (name: string, raw: string, min = 1): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} ${raw}: expected an integer ≥ ${min}\n\n${USAGE}`);
    process.exit(2);
  }
  return n;
};
const STEPS = positive('steps', values.steps ?? (values.quick ? '1000' : '10000'), 200);
const RSS_EFFECTS = positive('rss-effects', values['rss-effects'] ?? (values.quick ? '10000' : '100000'), 10);
const RSS_CONCURRENCY = positive('rss-concurrency', values['rss-concurrency']);
const CONCURRENT = positive('concurrent', values.concurrent);
const MAX_RETRIES = positive('retries', values.retries, 0);
const BASELINE = positive('baseline', values.baseline);
const LEDGERS = values.ledgers.split(',').map((l) => l.trim()).filter(Boolean);
for (const l of LEDGERS) {
  if (l !== 'sqlite' && l !== 'postgres') {
    console.error(`--ledgers: unknown ledger "${l}" (sqlite, postgres)\n\n${USAGE}`);
    process.exit(2);
  }
}
if (values.cache !== undefined) positive('cache', values.cache, 0);
const CACHE_SETTING = values.cache ?? process.env.EFFECTD_WORKFLOW_CACHE;
const PG_URL = values.pg ?? process.env.EFFECTD_TEST_PG_URL ?? 'postgres://effectd:effectd@127.0.0.1:5432/effectd_test';
const RUN = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const SECRET = randomBytes(32).toString('hex');
const WARMUP = 100;
const WINDOW = 100;
const STEPS_PER_RSS_WORKFLOW = 10;
const REQUEST_TIMEOUT_MS = 120_000;
const CACHE_METRICS = ['effectd_workflow_cache_max_effects', 'effectd_workflow_cache_effects', 'effectd_workflow_cache_streams'] as const;
const ARTIFACT = join(packageRoot(), 'test-artifacts', 'bench-workflow-length.json');

type Ledger = 'sqlite' | 'postgres';

// ---------------------------------------------------------------- one effect over HTTP, checked

/**
 * How one effect came back: `done` only when effectd said done for a real dispatch (not a content
 * hold, not a replay). `retried` lists the answers before the last one that told the caller to send
 * the command again (action retry_after, e.g. 503 contention); `ms` runs from the first send to the last answer.
 */
interface Sample { ms: number; outcome: string; retried: string[] }

interface Target { url: string; token: string }

/** The first answer of every kind that was not a plain done, as effectd sent it (for the report). */
const examples: Record<string, string> = {};
function note(outcome: string, text: string): void {
  if (outcome !== 'done' && !(outcome in examples)) examples[outcome] = text.slice(0, 400);
}

/** One exchange: its outcome, and how long effectd asked to wait when it said "send it again". */
async function exchangeOnce(target: Target, command: Record<string, unknown>): Promise<{ outcome: string; retryAfterMs?: number }> {
  try {
    const res = await fetch(`${target.url}/v1/effects`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
      body: JSON.stringify(command), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let body: { status?: string; error?: string; action?: string; retryAfterMs?: number; replayed?: boolean; reason?: string } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not JSON: counted by its status code below
    }
    const outcome = res.status !== 200 ? `http ${res.status}${body.error ? ` ${body.error}` : ''}`
      : body.status !== 'done' ? String(body.status ?? 'no status')
      : body.replayed ? 'done (replayed)'
      : typeof body.reason === 'string' && body.reason.startsWith('same content') ? 'done (held: same content)'
      : 'done';
    note(outcome, text);
    if (res.status === 200 || body.action !== 'retry_after') return { outcome };
    return { outcome, retryAfterMs: typeof body.retryAfterMs === 'number' ? body.retryAfterMs : 1000 * (Number(res.headers.get('retry-after')) || 1) };
  } catch (error) {
    const e = error as Error;
    const outcome = `error ${e.name === 'TimeoutError' ? `timeout ${REQUEST_TIMEOUT_MS} ms` : e.message}`;
    note(outcome, String(e.stack ?? e));
    return { outcome };
  }
}

/** POST /v1/effects; an answer that says "retry after" is followed (up to --retries times, counted), anything else is final. */
async function submit(target: Target, command: Record<string, unknown>): Promise<Sample> {
  const t0 = performance.now();
  const retried: string[] = [];
  for (;;) {
    const { outcome, retryAfterMs } = await exchangeOnce(target, command);
    if (retryAfterMs === undefined || retried.length >= MAX_RETRIES) return { ms: performance.now() - t0, outcome, retried };
    retried.push(outcome);
    await sleep(retryAfterMs);
  }
}

let invoice = 0;
/** One payments.charge: a fresh invoice and amount every time, so the content index never holds one back. */
function charge(workflowId: string, step: number): Record<string, unknown> {
  invoice++;
  return { workflowId, step, tool: 'payments.charge', args: { invoiceId: `INV-${RUN}-${invoice}`, amount: 1000 + (invoice % 50_000) } };
}

/** Answers that were not a plain `done`, by kind. */
function notDone(samples: readonly Sample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.outcome !== 'done') out[s.outcome] = (out[s.outcome] ?? 0) + 1;
  return out;
}
const count = (tally: Record<string, number>) => Object.values(tally).reduce((a, b) => a + b, 0);

/** Answers that asked for the command again (and were followed), by kind. */
function retriedAnswers(samples: readonly Sample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) for (const r of s.retried) out[r] = (out[r] ?? 0) + 1;
  return out;
}

interface Stats { effects: number; p50: number; p99: number; notDone: Record<string, number>; retries: Record<string, number>; retriedEffects: number }
function stats(samples: readonly Sample[]): Stats {
  return {
    effects: samples.length, ...latencySummary(samples.map((s) => s.ms)), notDone: notDone(samples),
    retries: retriedAnswers(samples), retriedEffects: samples.filter((s) => s.retried.length > 0).length,
  };
}

// ---------------------------------------------------------------- effectd process, RSS, metrics

function rssKb(pid: number): { rssKb: number; hwmKb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}
const mb = (kb: number) => (kb / 1024).toFixed(1);

/** Sums every sample of a metric (all label sets); undefined when effectd does not export it. */
function metricValue(text: string, name: string): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match?.[1] === name) total = (total ?? 0) + Number(match[3]);
  }
  return total;
}

/** Every exported effectd_* sample whose name speaks of the workflow cache or of conflicts/retries. */
function interestingMetrics(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^(effectd_[a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match || !/workflow_cache|conflict|retr|race/.test(match[1]!)) continue;
    out[`${match[1]}${match[2] ?? ''}`] = Number(match[3]);
  }
  return out;
}

interface Scrape { ms: number; cache: Record<string, number | null>; related: Record<string, number> }
async function scrapeMetrics(url: string): Promise<Scrape> {
  const t0 = performance.now();
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })).text();
  return {
    ms: performance.now() - t0,
    cache: Object.fromEntries(CACHE_METRICS.map((m) => [m, metricValue(text, m) ?? null])),
    related: interestingMetrics(text),
  };
}

const live = new Set<EffectdProcess>();
process.once('exit', () => {
  for (const p of live) p.child.kill('SIGKILL');
});
process.once('SIGINT', () => process.exit(130));

interface Instance { name: string; process: EffectdProcess; target: Target; dataDir: string; schema?: string; stderr: { head: string } }

/** What each effectd process wrote on stderr after it was ready (its first 4,000 characters), by instance. */
const effectdStderr: Record<string, string> = {};

async function startEffectd(ledger: Ledger, label: string, config: string, dir: string): Promise<Instance> {
  const dataDir = join(dir, label);
  const schema = ledger === 'postgres' ? `bench_wl_${RUN}_${label.replace(/[^a-z0-9_]/gi, '_')}` : undefined;
  const args = ['--port', '0', '--data-dir', dataDir, '--config', config,
    ...(schema ? ['--ledger', `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`] : [])];
  const env: Record<string, string> = { EFFECTD_SECRET: SECRET, ...(CACHE_SETTING !== undefined ? { EFFECTD_WORKFLOW_CACHE: CACHE_SETTING } : {}) };
  const child = await spawnEffectdProcess(args, env);
  live.add(child);
  // The embedded default: effectd wrote <data-dir>/credentials.json with one agent on first start.
  const { credentials } = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { credentials: { token: string; role: string }[] };
  const token = credentials.find((c) => c.role === 'agent')?.token;
  if (!token) throw new Error(`no agent credential in ${dataDir}/credentials.json`);
  const stderr = { head: '' };
  child.child.stderr!.on('data', (d: Buffer) => {
    if (stderr.head.length < 4_000) stderr.head = (stderr.head + d.toString()).slice(0, 4_000);
  });
  return { name: `${ledger}/${label}`, process: child, target: { url: child.url!, token }, dataDir, stderr, ...(schema ? { schema } : {}) };
}

async function stopEffectd(instance: Instance): Promise<void> {
  await instance.process.stop();
  live.delete(instance.process);
  if (instance.stderr.head) effectdStderr[instance.name] = instance.stderr.head;
  if (instance.schema) await pgExec(`DROP SCHEMA IF EXISTS ${instance.schema} CASCADE`).catch(() => undefined);
  rmSync(instance.dataDir, { recursive: true, force: true });
}

const pgExec = (sql: string) => pgScalar(PG_URL, sql);

const log = (line: string) => process.stderr.write(`${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

// ---------------------------------------------------------------- the phases

async function oneEffectWorkflows(target: Target, label: string, n: number): Promise<Sample[]> {
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) out.push(await submit(target, charge(`wl-${RUN}-${label}-${i}`, 1)));
  return out;
}

interface LongRun {
  steps: number;
  seconds: number;
  early: Stats & { from: number; to: number };
  last: Stats & { from: number; to: number };
  ratio: number;
  /** p50/p99 of every 100 steps, to see the growth. */
  windows: { from: number; to: number; p50: number; p99: number }[];
  notDone: Record<string, number>;
  retries: Record<string, number>;
}

async function longWorkflow(target: Target, ledger: Ledger): Promise<LongRun> {
  const workflowId = `wl-${RUN}-${ledger}-long`;
  const samples: Sample[] = [];
  const every = Math.min(1_000, Math.max(100, Math.floor(STEPS / 10)));
  const started = performance.now();
  for (let step = 1; step <= STEPS; step++) {
    samples.push(await submit(target, charge(workflowId, step)));
    if (step % every === 0 || step === STEPS) {
      const recent = latencySummary(samples.slice(-WINDOW).map((s) => s.ms));
      const bad = count(notDone(samples));
      const again = count(retriedAnswers(samples));
      log(`  ${ledger} long workflow: step ${step}/${STEPS}, ${seconds(performance.now() - started)}, p50 of the last ${WINDOW} ${recent.p50} ms (p99 ${recent.p99} ms)${bad ? `, ${bad} not done so far` : ''}${again ? `, ${again} retries so far` : ''}`);
    }
  }
  const window = (from: number, to: number) => ({ from, to, ...stats(samples.slice(from - 1, to)) });
  const early = window(101, 200);
  const last = window(STEPS - WINDOW + 1, STEPS);
  const windows = [];
  for (let from = 1; from <= STEPS; from += WINDOW) {
    const to = Math.min(STEPS, from + WINDOW - 1);
    windows.push({ from, to, ...latencySummary(samples.slice(from - 1, to).map((s) => s.ms)) });
  }
  return { steps: STEPS, seconds: (performance.now() - started) / 1000, early, last, ratio: last.p50 / early.p50, windows, notDone: notDone(samples), retries: retriedAnswers(samples) };
}

interface ConcurrentRun extends Stats { wallMs: number; http409: number; http5xx: number }

async function concurrently(target: Target, commands: Record<string, unknown>[]): Promise<ConcurrentRun> {
  const t0 = performance.now();
  const samples = await Promise.all(commands.map((c) => submit(target, c)));
  const wallMs = performance.now() - t0;
  return {
    ...stats(samples), wallMs,
    http409: samples.filter((x) => x.outcome.startsWith('http 409')).length,
    http5xx: samples.filter((x) => /^http 5/.test(x.outcome)).length,
  };
}

interface RssRun {
  effects: number;
  workflows: number;
  concurrency: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  notDone: Record<string, number>;
  retries: Record<string, number>;
  rssStartKb: number;
  rssBeforeKb: number;
  rssAfterKb: number;
  peakKb: number;
  rssAfterScrapeKb: number;
  samples: { effects: number; seconds: number; rssKb: number; p50: number }[];
  scrape: Scrape;
}

async function rssPhase(ledger: Ledger, config: string, dir: string): Promise<RssRun> {
  const instance = await startEffectd(ledger, 'rss', config, dir);
  try {
    const pid = instance.process.pid;
    const rssStartKb = rssKb(pid).rssKb;
    await oneEffectWorkflows(instance.target, `${ledger}-rss-warmup`, WARMUP);
    const rssBeforeKb = rssKb(pid).rssKb;
    const workflows = Math.ceil(RSS_EFFECTS / STEPS_PER_RSS_WORKFLOW);
    const effects = workflows * STEPS_PER_RSS_WORKFLOW;
    log(`  ${ledger} RSS phase: ${effects} effects over ${workflows} workflows (${STEPS_PER_RSS_WORKFLOW} steps each, ${RSS_CONCURRENCY} workflows at once); RSS ${mb(rssBeforeKb)} MB after warm-up`);
    const all: Sample[] = [];
    const progress: RssRun['samples'] = [];
    const every = Math.max(STEPS_PER_RSS_WORKFLOW, Math.floor(effects / 10));
    let nextReport = every;
    let nextWorkflow = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: RSS_CONCURRENCY }, async () => {
      for (let w = nextWorkflow++; w < workflows; w = nextWorkflow++) {
        for (let step = 1; step <= STEPS_PER_RSS_WORKFLOW; step++) {
          all.push(await submit(instance.target, charge(`wl-${RUN}-${ledger}-rss-${w}`, step)));
          if (all.length >= nextReport) {
            nextReport += every;
            const point = { effects: all.length, seconds: (performance.now() - started) / 1000, rssKb: rssKb(pid).rssKb, p50: latencySummary(all.slice(-1_000).map((s) => s.ms)).p50 };
            progress.push(point);
            const bad = count(notDone(all));
            log(`  ${ledger} RSS phase: ${point.effects}/${effects} effects, ${point.seconds.toFixed(1)} s, ${(point.effects / point.seconds).toFixed(0)} effects/s, p50 of the last 1000 ${point.p50} ms, RSS ${mb(point.rssKb)} MB${bad ? `, ${bad} not done so far` : ''}`);
          }
        }
      }
    }));
    const elapsed = (performance.now() - started) / 1000;
    const after = rssKb(pid);
    // /metrics may itself build projections over the whole ledger: RSS is read before and after it.
    const scrape = await scrapeMetrics(instance.target.url);
    const s = stats(all);
    return {
      effects, workflows, concurrency: RSS_CONCURRENCY, seconds: elapsed, perSecond: effects / elapsed, p50: s.p50, p99: s.p99, notDone: s.notDone, retries: s.retries,
      rssStartKb, rssBeforeKb, rssAfterKb: after.rssKb, peakKb: after.hwmKb, rssAfterScrapeKb: rssKb(pid).rssKb, samples: progress, scrape,
    };
  } finally {
    await stopEffectd(instance);
  }
}

interface LedgerResult {
  ledger: Ledger;
  baselineBefore: Stats;
  long: LongRun;
  baselineAfter: Stats;
  concurrent: {
    oneWorkflow: ConcurrentRun;
    oneEffectWorkflows: ConcurrentRun;
    ratio: number;
    /** How effectd's own conflict/retry counters (if it exports any) moved during the one-workflow burst. */
    oneWorkflowMetricDeltas: Record<string, number>;
  };
  rssAfterLongKb: number;
  /** /metrics of the first instance after phases 1–3. */
  scrapeMain: Scrape;
  rss: RssRun;
}

async function runLedger(ledger: Ledger, config: string, dir: string, results: LedgerResult[]): Promise<LedgerResult> {
  log(`${ledger}: starting effectd (fresh ${ledger === 'postgres' ? 'schema' : 'data dir'})…`);
  const instance = await startEffectd(ledger, 'main', config, dir);
  let partial: Partial<LedgerResult> = { ledger };
  try {
    await oneEffectWorkflows(instance.target, `${ledger}-warmup`, WARMUP);
    log(`  ${ledger}: ${BASELINE} one-effect workflows, sequentially…`);
    const baselineBefore = stats(await oneEffectWorkflows(instance.target, `${ledger}-base-before`, BASELINE));
    log(`  ${ledger}: one-effect workflows p50 ${baselineBefore.p50} ms, p99 ${baselineBefore.p99} ms`);
    partial = { ...partial, baselineBefore };
    log(`  ${ledger}: one workflow, ${STEPS} sequential steps…`);
    const long = await longWorkflow(instance.target, ledger);
    partial = { ...partial, long };
    writeArtifact([...results, partial as LedgerResult]);
    const rssAfterLongKb = rssKb(instance.process.pid).rssKb;
    const baselineAfter = stats(await oneEffectWorkflows(instance.target, `${ledger}-base-after`, BASELINE));
    log(`  ${ledger}: ${BASELINE} one-effect workflows after the long one: p50 ${baselineAfter.p50} ms, p99 ${baselineAfter.p99} ms`);
    log(`  ${ledger}: ${CONCURRENT} one-effect workflows at once, then ${CONCURRENT} steps of one workflow at once…`);
    const oneEffectWorkflows_ = await concurrently(instance.target, Array.from({ length: CONCURRENT }, (_, i) => charge(`wl-${RUN}-${ledger}-conc-${i}`, 1)));
    const beforeBurst = await scrapeMetrics(instance.target.url);
    const oneWorkflow = await concurrently(instance.target, Array.from({ length: CONCURRENT }, (_, i) => charge(`wl-${RUN}-${ledger}-conc-one`, i + 1)));
    const afterBurst = await scrapeMetrics(instance.target.url);
    const oneWorkflowMetricDeltas = Object.fromEntries(Object.entries(afterBurst.related)
      .filter(([k]) => !k.includes('workflow_cache'))
      .map(([k, v]) => [k, v - (beforeBurst.related[k] ?? 0)]));
    const concurrent = { oneWorkflow, oneEffectWorkflows: oneEffectWorkflows_, ratio: oneWorkflow.wallMs / oneEffectWorkflows_.wallMs, oneWorkflowMetricDeltas };
    log(`  ${ledger}: one workflow ${seconds(oneWorkflow.wallMs)} vs one-effect workflows ${seconds(oneEffectWorkflows_.wallMs)} (${concurrent.ratio.toFixed(2)}×)`);
    partial = { ...partial, baselineAfter, concurrent, rssAfterLongKb, scrapeMain: afterBurst };
    writeArtifact([...results, partial as LedgerResult]);
  } finally {
    await stopEffectd(instance);
  }
  const rss = await rssPhase(ledger, config, dir);
  return { ...(partial as LedgerResult), rss };
}

// ---------------------------------------------------------------- report

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}
const tally = (t: Record<string, number>) => (count(t) === 0 ? '0' : `${count(t)} (${Object.entries(t).map(([k, v]) => `${k}: ${v}`).join(', ')})`);
const verdict = (value: number, target: number) => (value <= target ? 'meets' : 'misses');
const cacheValue = (s: Scrape, name: string) => (s.cache[name] === null || s.cache[name] === undefined ? 'n/a' : String(s.cache[name]));

let meta: Record<string, unknown> = {};
function writeArtifact(results: LedgerResult[]): void {
  mkdirSync(join(packageRoot(), 'test-artifacts'), { recursive: true });
  writeFileSync(ARTIFACT, JSON.stringify({ ...meta, results, notDoneExamples: examples, effectdStderr }, null, 2));
}

function report(results: LedgerResult[]): void {
  const retried = (stat: Pick<Stats, 'retries' | 'retriedEffects'>) => (count(stat.retries) === 0 ? '0' : `${count(stat.retries)} (${stat.retriedEffects} effects; ${Object.entries(stat.retries).map(([k, v]) => `${k}: ${v}`).join(', ')})`);
  console.log(`\neffectd workflow length — effectd as its own process, payments simulator as the provider, HTTP, ${cpus().length} cores, node ${process.version}, ${String(meta.commit)}, ${String(meta.at)}`);
  console.log(`EFFECTD_WORKFLOW_CACHE: ${CACHE_SETTING ?? 'unset (effectd default)'}; an answer "retry after" is followed up to ${MAX_RETRIES} times per effect and counted\n`);
  console.log(`1–2. Sequential effects: one ${STEPS}-step workflow vs ${BASELINE} one-effect workflows (ms per effect, client-side)`);
  console.log(table(
    ['ledger', 'steps 101–200 p50', 'p99', `steps ${STEPS - WINDOW + 1}–${STEPS} p50`, 'p99', 'last/early p50', 'target ≤ 1.5×', '1-effect wf p50 (before)', 'p99', '1-effect wf p50 (after)', 'p99', 'long wf total', 'retries', 'not done'],
    results.map((r) => [r.ledger, String(r.long.early.p50), String(r.long.early.p99), String(r.long.last.p50), String(r.long.last.p99), `${r.long.ratio.toFixed(2)}×`, verdict(r.long.ratio, 1.5),
      String(r.baselineBefore.p50), String(r.baselineBefore.p99), String(r.baselineAfter.p50), String(r.baselineAfter.p99), `${r.long.seconds.toFixed(0)} s`,
      tally({ ...prefixed('long', r.long.retries), ...prefixed('1-effect', r.baselineBefore.retries), ...prefixed('1-effect after', r.baselineAfter.retries) }),
      tally({ ...prefixed('long', r.long.notDone), ...prefixed('1-effect', r.baselineBefore.notDone), ...prefixed('1-effect after', r.baselineAfter.notDone) })]),
  ));
  for (const r of results) {
    const picks = r.long.windows.filter((_, i, all) => i === 0 || i === all.length - 1 || i % Math.max(1, Math.floor(all.length / 10)) === 0);
    console.log(`   ${r.ledger} p50 by step: ${picks.map((w) => `${w.from}–${w.to}: ${w.p50}`).join(', ')}`);
  }
  console.log(`\n3. ${CONCURRENT} effects at once: steps of ONE workflow vs one-effect workflows (wall = first send → last final answer, retries included)`);
  console.log(table(
    ['ledger', '1 workflow wall', 'p50 ms', 'p99 ms', 'retry-after answers followed', 'final 409s', 'final 5xx', 'not done', `${CONCURRENT} workflows wall`, 'p50 ms', 'p99 ms', 'retries', 'not done', 'ratio', 'target ≤ 2×', 'effectd conflict metrics (Δ in the burst)'],
    results.map((r) => {
      const { oneWorkflow: a, oneEffectWorkflows: b } = r.concurrent;
      const related = Object.entries(r.concurrent.oneWorkflowMetricDeltas);
      return [r.ledger, seconds(a.wallMs), String(a.p50), String(a.p99), retried(a), String(a.http409), String(a.http5xx), tally(a.notDone),
        seconds(b.wallMs), String(b.p50), String(b.p99), retried(b), tally(b.notDone),
        `${r.concurrent.ratio.toFixed(2)}×`, verdict(r.concurrent.ratio, 2), related.length ? related.map(([k, v]) => `${k} ${v}`).join(', ') : 'n/a'];
    }),
  ));
  for (const r of results) console.log(`   ${r.ledger} after phases 1–3 (same process): RSS ${mb(r.rssAfterLongKb)} MB after the long workflow; ${CACHE_METRICS.map((m) => `${m} ${cacheValue(r.scrapeMain, m)}`).join(', ')}`);
  const first = results[0]?.rss;
  console.log(`\n4. RSS of a fresh effectd process over ${first?.effects ?? RSS_EFFECTS} effects in ${first?.workflows ?? '?'} workflows (${STEPS_PER_RSS_WORKFLOW} steps each, ${RSS_CONCURRENCY} at once)`);
  console.log(table(
    ['ledger', 'effects', 'time', 'effects/s', 'p50 ms', 'p99 ms', 'RSS at start MB', 'RSS before MB', 'RSS after MB', 'peak (VmHWM) MB', 'RSS after /metrics MB', '/metrics scrape', 'EFFECTD_WORKFLOW_CACHE', ...CACHE_METRICS, 'retries', 'not done'],
    results.map((r) => [r.ledger, String(r.rss.effects), `${r.rss.seconds.toFixed(0)} s`, r.rss.perSecond.toFixed(0), String(r.rss.p50), String(r.rss.p99),
      mb(r.rss.rssStartKb), mb(r.rss.rssBeforeKb), mb(r.rss.rssAfterKb), mb(r.rss.peakKb), mb(r.rss.rssAfterScrapeKb), `${r.rss.scrape.ms.toFixed(0)} ms`,
      CACHE_SETTING ?? 'unset', ...CACHE_METRICS.map((m) => cacheValue(r.rss.scrape, m)), tally(r.rss.retries), tally(r.rss.notDone)]),
  ));
  for (const r of results) console.log(`   ${r.ledger} RSS during the run: ${r.rss.samples.map((s) => `${s.effects}: ${mb(s.rssKb)} MB`).join(', ')}`);
  for (const r of results) {
    const other = Object.entries(r.rss.scrape.related).filter(([k]) => k.includes('workflow_cache') && !(CACHE_METRICS as readonly string[]).includes(k));
    if (other.length) console.log(`   ${r.ledger} other workflow-cache metrics after the RSS phase: ${other.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  console.log(`\nlatency = POST /v1/effects → final answer at the client (keep-alive). "not done" = a final answer other than status done for a fresh dispatch (HTTP ≠ 200, not_done, unknown, replayed, held, transport error), counted, not hidden. JSON: ${ARTIFACT}`);
}

function prefixed(prefix: string, t: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [`${prefix} ${k}`, v]));
}

// ---------------------------------------------------------------- main

async function main() {
  let commit = 'unknown commit';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: packageRoot(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: packageRoot(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()) commit += ' (with local changes)';
  } catch {
    // not a git checkout
  }
  let synchronousCommit: string | undefined;
  if (LEDGERS.includes('postgres')) {
    try {
      synchronousCommit = await pgExec('SHOW synchronous_commit');
    } catch (error) {
      throw new Error(`PostgreSQL at ${PG_URL.replace(/:[^:@/]*@/, ':…@')} is not reachable (${(error as Error).message}); run npm run services:up, or pass --ledgers sqlite`);
    }
  }
  meta = {
    at: new Date().toISOString(), commit, node: process.version, cores: cpus().length, loadAverageAtStart: loadavg(),
    options: { steps: STEPS, ledgers: LEDGERS, rssEffects: RSS_EFFECTS, rssConcurrency: RSS_CONCURRENCY, concurrent: CONCURRENT, baseline: BASELINE, warmup: WARMUP, window: WINDOW },
    workflowCacheSetting: CACHE_SETTING ?? null, postgresSynchronousCommit: synchronousCommit ?? null,
    targets: { lastOverEarlyP50: 1.5, oneWorkflowOverOneEffectWorkflowsWall: 2 },
  };
  const dir = join(tmpdir(), `effectd-workflow-length-${RUN}`);
  mkdirSync(dir, { recursive: true });
  const payments: SimulatorProcess = await spawnSimulator('payments');
  const config = writeFastPaymentsConfig(dir, payments.url, 10_000);
  const results: LedgerResult[] = [];
  try {
    for (const ledger of LEDGERS as Ledger[]) {
      results.push(await runLedger(ledger, config, dir, results));
      writeArtifact(results);
    }
  } finally {
    await payments.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  report(results);
  const bad = results.reduce((n, r) => n + count(r.long.notDone) + count(r.baselineBefore.notDone) + count(r.baselineAfter.notDone)
    + count(r.concurrent.oneWorkflow.notDone) + count(r.concurrent.oneEffectWorkflows.notDone) + count(r.rss.notDone), 0);
  if (bad) {
    console.log(`\n${bad} answers were not done (see the tables): the latencies include them. First answer of each kind:`);
    for (const [kind, text] of Object.entries(examples)) console.log(`  ${kind}: ${text}`);
  }
  for (const [name, text] of Object.entries(effectdStderr)) console.log(`\neffectd ${name} wrote on stderr (first 800 characters; all in the JSON):\n${text.slice(0, 800)}`);
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
