#!/usr/bin/env node
/**
 * Records one replay fixture (test/replay/README.md): runs a bounded set of the benchmark's fault
 * cells through `effectd bench` on a ledger of one stored format, then writes that ledger's RAW
 * rows (as they are in its table), the tool policies its effectd instances had and the cells that
 * produced each stream into test/replay/fixtures/<format>-v1.json.
 *
 * Run by scripts/record-replay-fixtures.sh, which exports and builds the commit being recorded
 * (`--tree`): the benchmark, the policies and the row reader are that build's, never the working
 * tree's. Needs PostgreSQL for the postgres formats (`npm run services:up`).
 *
 *   node test/replay/record.mjs --tree DIR --format verbatim|compact|deflate|sqlite --commit SHA --out FILE [--event-version N] [--keep]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { runScenario } from './scenario.mjs';

const { values } = parseArgs({
  options: {
    tree: { type: 'string' },
    format: { type: 'string' },
    commit: { type: 'string' },
    out: { type: 'string' },
    command: { type: 'string' },
    'event-version': { type: 'string' },
    keep: { type: 'boolean' },
  },
});
const tree = resolve(required('tree'));
const format = required('format');
const out = resolve(required('out'));
const commit = required('commit');
const PG = process.env.EFFECTD_REPLAY_PG ?? 'postgres://effectd:effectd@127.0.0.1:5432/effectd';

/** How each format is written: the environment effectd reads when its ledger opens. */
const FORMATS = {
  verbatim: { ledger: 'postgres', env: { EFFECTD_LEDGER_ENCODING: 'verbatim', EFFECTD_LEDGER_COMPRESSION: 'none' }, storedAs: 'PostgreSQL events table, one event per row: `type` + jsonb `data` as the event is (body NULL)' },
  compact: { ledger: 'postgres', env: { EFFECTD_LEDGER_ENCODING: 'compact', EFFECTD_LEDGER_COMPRESSION: 'none' }, storedAs: 'PostgreSQL events table, one row per append: `body` = format byte 0 + JSON of the compact events (base64 here)' },
  deflate: { ledger: 'postgres', env: { EFFECTD_LEDGER_ENCODING: 'compact', EFFECTD_LEDGER_COMPRESSION: 'deflate' }, storedAs: 'PostgreSQL events table, one row per append: `body` = format byte 1 + the compact JSON deflated with dictionary 1 (base64 here)' },
  sqlite: { ledger: 'sqlite', env: { EFFECTD_LEDGER_ENCODING: 'compact', EFFECTD_LEDGER_COMPRESSION: 'none' }, storedAs: 'SQLite events table, one event per row: `type` + TEXT `data`, the compact stored form (postgres-encoding.ts)' },
};
const spec = FORMATS[format];
if (!spec) throw new Error(`--format: one of ${Object.keys(FORMATS).join(', ')}, not ${format}`);

/**
 * The cells, as `effectd bench` arguments, one bench run (one ledger) each; every run adds
 * `--seeds 1 --no-kafka --lanes 1 --ledger <its own>`. Chosen for the histories they leave
 * (test/unit/replay-recorded.unit.spec.ts asserts that each fixture has them):
 */
const RUNS = [
  // lost reply → lookup → committed (after-mutation); not found → same-key resend → audit (charge,
  // before-mutation); not found → proven not_committed after the settle window (append-line: no
  // key, consistent lookup); no key and no lookup → escalated (notify).
  { why: 'lost replies: lookup, resend, proof of absence, escalation', args: ['--policy', 'effectd', '--workload', 'charge,append-line,notify', '--fault', 'after-mutation,before-mutation'] },
  // effectd SIGKILLed with the response held: a lapsed lease (unknown), five effects in one workflow.
  { why: 'a crash before the outcome is recorded', args: ['--policy', 'effectd', '--workload', 'email-5,cloud-create', '--fault', 'before-record'] },
  // Stripe v1 replays the stored 500: terminal_failure; v2 executes the resend: committed, then audited.
  { why: 'stored failures', args: ['--policy', 'effectd', '--workload', 'charge,charge-v2', '--fault', 'stored-failure'] },
  // the provider forgot the key: the resend charges twice, the audit detects it; a commit after the timeout.
  { why: 'duplicate detected, late commit', args: ['--policy', 'effectd', '--workload', 'charge', '--fault', 'retention-shorter-than-declared,late-commit'] },
  // the model decides again on unknown: held by content, released when the match proved absent.
  { why: 'holds and releases', args: ['--policy', 'effectd+redecide', '--workload', 'charge,append-line', '--fault', 'after-mutation,before-mutation'] },
  // sagas: completed, and every refused step (compensation in reverse order).
  { why: 'sagas with compensation', args: ['--policy', 'effectd', '--workload', 'trip-booking', '--fault', 'none', '--fail-at', 'all'] },
  // a provider unreachable for 400 ms: a refused step fails the saga; a refused compensation is sent again as a new slot.
  { why: 'saga compensations retried after an outage', args: ['--policy', 'effectd', '--workload', 'trip-booking', '--fault', 'before-dispatch', '--fail-at', 'all'] },
  { why: 'a saga step with a lost reply', args: ['--policy', 'effectd', '--workload', 'subscription-renewal', '--fault', 'after-mutation', '--fail-at', 'all'] },
  // the key expires while the outcome is open (its own effectd instance, short-retention contracts,
  // its own ledger: a SQLite file is shared by every instance of a run, so not there).
  { why: 'key expired', args: ['--policy', 'effectd', '--workload', 'charge', '--fault', 'key-expired'], ledgers: ['postgres'] },
  // What no cell leaves: a target hold, an operator's release and resolve, a detected duplicate an operator keeps, a journaled decision (scenario.mjs).
  { why: 'target hold, operator actions, duplicate detected and handled, decision journaled', scenario: true },
];

const dist = (path) => import(pathToFileURL(join(tree, 'dist', path)).href);
/** The first of these modules (paths in the tree) the recorded build has (modules move between versions). */
const inTree = async (...paths) => {
  for (const path of paths) if (existsSync(join(tree, path))) return import(pathToFileURL(join(tree, path)).href);
  throw new Error(`the build in ${tree} has none of ${paths.join(', ')}`);
};
const distOf = (...paths) => inTree(...paths.map((path) => join('dist', path)));
const [{ rowEvents }, { decodeStoredEvent }, { decodeLedgerEvent }, { workflowStream }, { BENCH_TIMINGS, benchConfig }, { parseConfig }, { ToolRegistry }, reconciler] = await Promise.all([
  dist('src/ledger/postgres-rows.js'), dist('src/ledger/postgres-encoding.js'), dist('src/core/events.js'), dist('src/core/streams.js'),
  inTree('packages/bench/dist/packages/bench/src/bench-config.js', 'dist/src/bench/bench-config.js'), distOf('src/config/config-loader.js', 'src/providers/config-loader.js'), dist('src/providers/tool-registry.js'),
  // Until e927034 a tool's policy was computed by the reconciler; later builds keep it on the tool (Tool.policy).
  existsSync(join(tree, 'dist', 'src/shell/reconciler.js')) ? dist('src/shell/reconciler.js') : Promise.resolve(undefined),
]);
const pg = (await import(pathToFileURL(join(tree, 'node_modules', 'pg', 'lib', 'index.js')).href)).default;
const Database = (await import(pathToFileURL(join(tree, 'node_modules', 'better-sqlite3', 'lib', 'index.js')).href)).default;

const work = mkdtempSync(join(tmpdir(), `effectd-replay-${format}-`));
const ledgers = [];
const cells = [];
const benchRuns = [];
try {
  let n = 0;
  for (const run of RUNS) {
    if (run.ledgers && !run.ledgers.includes(spec.ledger)) continue;
    n += 1;
    const base = `replay_${format}_${n}`;
    const sqliteFile = join(work, `${base}.db`);
    const ledgerUrl = spec.ledger === 'postgres' ? `${PG}${PG.includes('?') ? '&' : '?'}schema=${base}` : `sqlite:${sqliteFile}`;
    // What the benchmark's lane calls its configurations (packages/bench/src/lane-ledger.ts): the lane's own, and its short-key instance's.
    const lanes = run.scenario ? [['scenario', BENCH_TIMINGS.longRetentionMs]] : [['http_1', BENCH_TIMINGS.longRetentionMs], ['http_1_short_keys', BENCH_TIMINGS.shortRetentionMs]];
    const configurations = spec.ledger === 'postgres'
      ? lanes.map(([name, retentionMs]) => ({ name, schema: `${base}_${name}`, retentionMs }))
      : [{ name: lanes[0][0], file: sqliteFile, retentionMs: lanes[0][1] }];
    if (spec.ledger === 'postgres') await dropSchemas(configurations.map((c) => c.schema));
    let ran;
    if (run.scenario) {
      process.stderr.write(`[record ${format}] scenario (test/replay/scenario.mjs)\n`);
      const started = Date.now();
      const root = join(work, base);
      mkdirSync(root, { recursive: true });
      ran = (await runScenario({ tree, root, ledgerUrl, env: spec.env, say: (line) => process.stderr.write(`[record ${format}]   ${line}\n`) })).map((c) => ({ ...c, seed: 1, faultInjected: 1 }));
      benchRuns.push({ command: 'test/replay/scenario.mjs', why: run.why, exit: 0, seconds: Math.round((Date.now() - started) / 100) / 10, verdict: ran.map((c) => c.what).join('; ') });
    } else {
    const results = join(work, `${base}.cells.json`);
    const args = [...run.args, '--seeds', '1', '--no-kafka', '--lanes', '1', '--ledger', ledgerUrl, '--json', results];
    const shown = `effectd bench ${args.map((a) => (a === ledgerUrl ? (spec.ledger === 'postgres' ? `'postgres://…?schema=${base}'` : `sqlite:${base}.db`) : a === results ? 'cells.json' : a)).join(' ')}`;
    process.stderr.write(`[record ${format}] ${shown}\n`);
    const started = Date.now();
    const bench = spawnSync(process.execPath, [join(tree, 'bin', 'effectd.js'), 'bench', ...args], { cwd: tree, env: { ...process.env, ...spec.env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const verdict = (bench.stdout ?? '').trim().split('\n').filter((l) => /^(OK|FAIL)\b|broke|never fired/.test(l));
    if (bench.status !== 0) process.stderr.write(`[record ${format}] bench exited ${bench.status}:\n${bench.stdout}\n${bench.stderr}\n`);
    benchRuns.push({ command: shown, why: run.why, exit: bench.status, seconds: Math.round((Date.now() - started) / 100) / 10, verdict: verdict.join(' ') });
    ran = JSON.parse(readFileSync(results, 'utf8'));
    }
    for (const configuration of configurations) {
      const rows = spec.ledger === 'postgres' ? await postgresRows(configuration.schema) : sqliteRows(configuration.file);
      if (rows.length === 0) continue;
      const events = spec.ledger === 'postgres' ? rows.flatMap((row) => rowEvents({ ...row, body: row.body === null ? null : Buffer.from(row.body, 'base64') }).map((r) => r.event))
        : rows.map((row) => decodeLedgerEvent(row.type, decodeStoredEvent(row.stream, row.type, JSON.parse(row.data))));
      const streams = new Set(rows.map((r) => r.stream));
      ledgers.push({
        kind: spec.ledger,
        name: spec.ledger === 'postgres' ? `${configuration.schema}.events` : `${base}.db events`,
        configuration: { keyRetentionMs: configuration.retentionMs, ...policiesOf(configuration.retentionMs, new Set(events.filter((e) => e.type === 'EffectDeclared').map((e) => e.tool))) },
        cells: ran.filter((c) => streams.has(workflowStream('default', c.workflowId))).map((c) => ({
          stream: workflowStream('default', c.workflowId), workload: c.workload, fault: c.fault, policy: c.policy, seed: c.seed, ...(c.failAt !== undefined ? { failAt: c.failAt } : {}),
          faultInjected: c.faultInjected, ...(c.what ? { what: c.what } : {}), ...(c.error ? { error: String(c.error).split('\n')[0] } : {}),
        })),
        rows,
      });
    }
    cells.push(...ran.map((c) => `${c.workload} × ${c.fault} × ${c.policy}${c.failAt !== undefined ? ` (failAt ${c.failAt})` : ''}`));
    if (spec.ledger === 'postgres' && !values.keep) await dropSchemas(configurations.map((c) => c.schema));
  }
} finally {
  if (!values.keep) rmSync(work, { recursive: true, force: true });
  else process.stderr.write(`[record ${format}] kept ${work}\n`);
}

const fixture = {
  header: {
    format,
    storedAs: spec.storedAs,
    env: spec.env,
    eventVersion: Number(values['event-version'] ?? 1),
    effectdCommit: commit,
    recordedAt: new Date().toISOString(),
    command: values.command ?? `scripts/record-replay-fixtures.sh ${format}`,
    benchRuns,
    cells,
    note: 'Recorded histories: never re-recorded to make a failing replay pass (test/replay/README.md).',
  },
  ledgers,
};
mkdirSync(join(out, '..'), { recursive: true });
writeFileSync(out, serialize(fixture));
process.stderr.write(`[record ${format}] ${out}: ${ledgers.reduce((s, l) => s + l.rows.length, 0)} rows, ${cells.length} cells\n`);

/** Indented JSON, except that each stored row is one line (a fixture stays small and its rows diff line by line). */
function serialize(fixture) {
  const rowsOf = new Map();
  const marked = { ...fixture, ledgers: fixture.ledgers.map((ledger, i) => {
    rowsOf.set(`@rows${i}@`, ledger.rows);
    return { ...ledger, rows: `@rows${i}@` };
  }) };
  return `${JSON.stringify(marked, null, 1).replace(/"(@rows\d+@)"/g, (_, key) => `[\n${rowsOf.get(key).map((row) => `   ${JSON.stringify(row)}`).join(',\n')}\n  ]`)}\n`;
}

function required(name) {
  const value = values[name];
  if (!value) throw new Error(`--${name} is required`);
  return value;
}

/** The policies each tool that appears had when its effects were recorded (src/shell/reconciler.ts `reconcilePolicy`, the tool's keyPolicy), and the sagas' compensation retry. */
function policiesOf(retentionMs, tools) {
  const config = benchConfig({}, retentionMs);
  const registry = new ToolRegistry(parseConfig(config, 'the benchmark configuration'));
  const policies = {};
  for (const name of [...tools].sort()) {
    const tool = registry.get(name);
    if (!tool) throw new Error(`tool ${name} appears in the ledger but not in the benchmark's configuration`);
    const policy = tool.policy ?? reconciler.reconcilePolicy(tool);
    const { lookup, lookupConsistent, dedupesByKey, settleWindowMs, resends } = policy;
    policies[name] = {
      reconcile: { lookup, lookupConsistent, dedupesByKey, settleWindowMs, resends },
      keyPolicy: { dedupesByKey: tool.keyPolicy?.dedupesByKey ?? policy.dedupesByKey },
      ...(policy.concurrentTargets !== undefined ? { concurrentTargets: policy.concurrentTargets } : {}),
    };
  }
  return { sagaCompensationRetry: config.sagas.compensationRetry, tools: policies };
}

async function withPg(work) {
  const client = new pg.Client({ connectionString: PG });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function dropSchemas(schemas) {
  return withPg(async (client) => {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
}

/** The rows as they are in the table: the columns the ledger's reader decodes (src/ledger/postgres-rows.ts StoredRow), `body` as base64, `data` the jsonb as PostgreSQL returns it. */
function postgresRows(schema) {
  return withPg(async (client) => {
    const exists = await client.query('SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2', [schema, 'events']);
    if (exists.rowCount === 0) return [];
    const { rows } = await client.query(`SELECT stream, revision, last_revision, position::text AS position, type, data, body FROM ${schema}.events x ORDER BY x.position`);
    return rows.map((row) => ({ ...row, body: row.body === null ? null : row.body.toString('base64') }));
  });
}

/** The rows as they are in the SQLite table (src/ledger/sqlite-ledger.ts): `data` the TEXT as stored. */
function sqliteRows(file) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT stream, revision, position, type, data FROM events ORDER BY position').all();
  } finally {
    db.close();
  }
}
