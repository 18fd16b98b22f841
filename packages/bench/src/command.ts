import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { CellResult } from './cell-runner.js';
import { ALL_POLICIES, BENCH_POLICIES, CONTRACT_BREAKING_FAULTS, FAULTS, isEffectd, isFault, isPolicy, MCP_FAULTS, MCP_POLICIES, POLICIES, POLICY_VARIANTS, STALL_LIMIT_MS, undetectedDuplicates, type BenchPolicy, type DesignFaultName } from './names.js';
import { DEFAULT_WORKLOADS, workload as findWorkload, workloadNames } from './workloads.js';
import { BENCH_FLAGS } from '../../../src/cli/bench-flags.js';
import type { CommandSpec } from '../../../src/cli/cli-kit.js';

const DEFAULT_SEEDS = 3;

/**
 * `effectd bench`: the service's CLI loads this (src/cli/bench.command.ts) when the workspace is
 * there; its flags are the service's (src/cli/bench-flags.ts), so an installation without the
 * benchmark still parses them and says how to get it.
 */
export const benchCommand: CommandSpec = {
  name: 'bench',
  summary: 'The adversarial benchmark: workloads × faults × policies × seeds against simulated providers; ground truth from their oracles.',
  usage: 'effectd bench [--quick] [--limbo] [--mcp] [--lane mcp-no-identity] [--workload a,b] [--fault a,b] [--policy a,b] [--seeds N] [--fail-at all|sample] [--kafka BROKERS | --no-kafka] [--json FILE] [--svg FILE]',
  options: BENCH_FLAGS,
  optionHelp: [
    ['--quick', `1 seed of the whole matrix, each saga's failAt sampled per fault, effectd+redecide on 4 faults (under 2 minutes on 2 cores)`],
    ['--limbo', 'LIMBO\'s fault modes and the six named LIMBO-style cases instead of the matrix, scored by LIMBO\'s measures per policy (task success, exactly-once success, duplicates, collateral writes, overclaim); JSON to bench-results/ unless --json; with --quick a few cases; --fault and --workload pick cases (docs/benchmark.md, "LIMBO\'s fault modes")'],
    ['--mcp', `add the MCP lane: ${MCP_POLICIES.join(' and ')} (the agent through the official MCP client SDK, to effectd's /mcp or straight to an upstream MCP server), on the per-step workloads under ${MCP_FAULTS.join(', ')}`],
    ['--lane mcp-no-identity', 'run only the MCP no-identity lane: a desktop-style client (official MCP SDK over stdio, no _meta) under lost replies and deliberate repeats, per option (refuse, content, content+repeat-arg, arg-every-call; harness-meta for reference): duplicates, false dedups, refusals (--seeds, default 3)'],
    ['--workload LIST', `comma-separated (default: ${DEFAULT_WORKLOADS.join(', ')})`],
    ['--fault LIST', `comma-separated (default: all: ${FAULTS.join(', ')})`],
    ['--policy LIST', `comma-separated (default: all: ${POLICIES.join(', ')}, and ${POLICY_VARIANTS.join(', ')}: effectd with a model that decides again on every unknown; ${MCP_POLICIES.join(', ')} with --mcp or by name)`],
    ['--fail-at all|sample', 'saga workloads: every refused step (none, each step) in every cell, or one per fault rotating with the seed (default: all; sample with --quick)'],
    ['--kafka BROKERS', 'the rebalance cells of effectd run over this Kafka (default EFFECTD_KAFKA_BROKERS or 127.0.0.1:9092); when it is unreachable they run over HTTP, and the run says so'],
    ['--no-kafka', 'run the rebalance cells of effectd over HTTP (a second instance on the same ledger)'],
    ['--lanes N', 'effectd cells over HTTP run in N lanes, each its own effectd processes (default 2)'],
    ['--seeds N', `seeds 1..N per cell (default ${DEFAULT_SEEDS}; 1 with --quick)`],
    ['--json FILE', 'write one JSON object per cell (an array), with the agent transcript'],
    ['--svg FILE', 'write a chart: duplicates, missing and unresolved per policy per fault'],
    ['--concurrency N', 'baseline cells run N at a time (default 3); effectd cells run one at a time'],
    ['--ledger URL', 'ledger of the benchmark\'s effectd instances (default SQLite in a temp dir; or postgres://…)'],
    ['--redecide P', 'probability that the effectd agent ignores "do not start another" and decides again on unknown (default 0)'],
    ['--verbose', 'print one line per cell while it runs, and the per-cell table at the end'],
  ],
  async run(values) {
    if (values.lane !== undefined) return runLane(String(values.lane), values.seeds !== undefined ? positiveInt('seeds', values.seeds) : DEFAULT_SEEDS, (line) => process.stdout.write(`${line}\n`));
    // Every effectd command line loads this file; the benchmark's machinery (simulators, proxies) only when it runs.
    const [{ planCells, REDECIDE_QUICK_FAULTS, runMatrix }, { cellLine, cellTable, duration, faultTable, policyTable, sagaTable, stripeProfileTable, unknownTable }, { renderSvg }, { FAULT_SPECS, faultApplies }] = await Promise.all([
      import('./matrix.js'), import('./report-table.js'), import('./report-svg.js'), import('./faults.js'),
    ]);
    const list = <T extends string>(flag: string, all: readonly T[], valid: (s: string) => boolean): T[] => {
      const raw = values[flag];
      if (raw === undefined || raw === 'all') return [...all];
      const items = String(raw).split(',').map((s) => s.trim()).filter(Boolean);
      const bad = items.filter((s) => !valid(s));
      if (bad.length > 0) throw new Error(`--${flag}: unknown ${bad.join(', ')}; choose from ${all.join(', ')}`);
      return items as T[];
    };
    if (values.limbo) {
      const { runLimbo } = await import('./limbo/limbo-run.js');
      return runLimbo({
        quick: values.quick === true, policies: list<BenchPolicy>('policy', POLICIES, isPolicy),
        ...(values.fault !== undefined ? { faults: String(values.fault).split(',').map((s) => s.trim()).filter(Boolean) } : {}),
        ...(values.workload !== undefined ? { workloads: String(values.workload).split(',').map((s) => s.trim()).filter(Boolean) } : {}),
        seeds: Array.from({ length: values.seeds !== undefined ? positiveInt('seeds', values.seeds) : values.quick ? 1 : DEFAULT_SEEDS }, (_, i) => i + 1),
        concurrency: values.concurrency !== undefined ? positiveInt('concurrency', values.concurrency) : 3,
        httpLanes: values.lanes !== undefined ? positiveInt('lanes', values.lanes) : 2,
        ...(values.json ? { json: String(values.json) } : {}), ...(values.ledger ? { ledgerUrl: String(values.ledger) } : {}),
        out: (line = '') => process.stdout.write(`${line}\n`),
      });
    }
    const workloads = list<string>('workload', DEFAULT_WORKLOADS, (s) => workloadNames().includes(s));
    const faults = list<DesignFaultName>('fault', FAULTS, isFault);
    const listed = list<BenchPolicy>('policy', BENCH_POLICIES, isPolicy);
    // --mcp adds the MCP lane's two columns to whatever else runs (with --policy, only those named and these).
    const policies = values.mcp ? ALL_POLICIES.filter((p) => listed.includes(p) || (MCP_POLICIES as readonly string[]).includes(p)) : listed;
    const seedCount = values.seeds !== undefined ? positiveInt('seeds', values.seeds) : values.quick ? 1 : DEFAULT_SEEDS;
    const concurrency = values.concurrency !== undefined ? positiveInt('concurrency', values.concurrency) : 3;
    const redecide = values.redecide !== undefined ? probability(values.redecide) : undefined;
    const seeds = Array.from({ length: seedCount }, (_, i) => i + 1);
    const failAtFlag = values['fail-at'] === undefined ? (values.quick ? 'sample' : 'all') : String(values['fail-at']);
    if (failAtFlag !== 'all' && failAtFlag !== 'sample') throw new Error(`--fail-at takes all or sample, not "${failAtFlag}"`);
    const failAt = failAtFlag;
    const redecideFaults = values.quick ? REDECIDE_QUICK_FAULTS : [...FAULTS];
    const kafka = values['no-kafka'] ? false as const : String(values.kafka ?? process.env.EFFECTD_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((b) => b.trim()).filter(Boolean);
    const httpLanes = values.lanes !== undefined ? positiveInt('lanes', values.lanes) : 2;
    const total = planCells({ workloads, faults, policies, seeds, redecideFaults, failAt }).length;
    if (total === 0) throw new Error(`no cell to run: ${faults.join(', ')} ${faults.length === 1 ? 'does' : 'do'} not run on ${workloads.join(', ')} (a fault runs only where it can reach an intent; docs/benchmark.md, "Faults")`);
    const tty = process.stdout.isTTY === true;
    // Exiting (rather than dying on the signal) runs the handler that SIGKILLs the bench's effectd processes.
    const interrupted = (signal: string) => {
      process.stderr.write(`\neffectd bench: ${signal}; stopping\n`);
      process.exit(130);
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    const out = (line = '') => process.stdout.write(`${line}\n`);

    out(`effectd bench${values.quick ? ' --quick' : ''}: ${workloads.length} workloads × ${faults.length} faults × ${policies.length} policies × ${seedCount} seed${seedCount === 1 ? '' : 's'}: ${total} cells`);
    out(`(sagas: failAt ${failAt === 'all' ? 'none and every step, in every cell' : 'sampled, one per fault, covering each step'}; effectd+redecide under ${values.quick ? redecideFaults.join(', ') : 'every fault'}, not on sagas)`);
    const narrow = faults.filter((f) => workloads.some((w) => !faultApplies(FAULT_SPECS[f], findWorkload(w)!)));
    if (narrow.length > 0) out(`(${narrow.map((f) => `${f} only on ${workloads.filter((w) => faultApplies(FAULT_SPECS[f], findWorkload(w)!)).join(', ') || 'no workload of this run'}`).join('; ')}: the other workloads have no intent it can reach)`);
    out(`(baseline cells ${concurrency} at a time; effectd cells one at a time per lane (${httpLanes} HTTP lane${httpLanes === 1 ? '' : 's'}, rebalance over Kafka) through real effectd processes; ground truth from the providers' oracles)\n`);
    if (values.verbose) out(`${faults.map((f) => `  ${f.padEnd(16)} ${FAULT_SPECS[f].boundary}`).join('\n')}\n`);

    let lastLine = 0;
    const run = await runMatrix({
      workloads, faults, policies, seeds, concurrency, redecide, redecideFaults, failAt, kafka, httpLanes,
      ...(values.ledger ? { ledgerUrl: String(values.ledger) } : {}),
      onNote(note) {
        out(note);
      },
      onCell(result, p) {
        const status = `[${String(p.done).padStart(String(p.total).length)}/${p.total}  ${duration(p.elapsedMs)} elapsed, ETA ${duration(p.etaMs)}]`;
        const notable = result.error !== undefined || (isEffectd(result.policy) && failsPromise(result)) || (result.fault !== 'none' && result.faultInjected === 0);
        if (values.verbose || notable) {
          if (tty) process.stdout.write('\r\x1b[K');
          out(`${status} ${cellLine(result)}${notable && isEffectd(result.policy) && failsPromise(result) ? '  <-- effectd broke its promise' : ''}${result.fault !== 'none' && result.faultInjected === 0 && !result.error ? '  <-- fault never fired' : ''}`);
        } else if (tty) {
          process.stdout.write(`\r\x1b[K${status} ${result.workload} × ${result.fault} × ${result.policy}`);
        } else if (p.done - lastLine >= 20 || p.done === p.total) {
          lastLine = p.done;
          out(status);
        }
      },
    });
    if (tty) process.stdout.write('\r\x1b[K');

    const cells = run.results;
    out(`\nduplicates / missing / unresolved, per fault and policy (summed over ${workloads.length} workloads × ${seedCount} seed${seedCount === 1 ? '' : 's'}; "1 (detected 1)": duplicates, and those effectd detected and queued for an operator):\n`);
    out(faultTable(cells));
    out('\nfirst answers that were unknown (of the intents answered), and time in unknown, per fault and policy:\n');
    out(unknownTable(cells));
    out('\nper policy:\n');
    out(policyTable(cells));
    const profiles = stripeProfileTable(cells);
    if (profiles) {
      out('\nStripe v1 → v2 (charge → charge-v2: a 500 stored under the key is replayed by v1, executed again by v2), dup/missing/unresolved per fault:\n');
      out(profiles);
    }
    const sagas = sagaTable(cells);
    if (sagas) {
      out('\nsaga workloads (the "never" checks, from the providers\' oracles):\n');
      out(sagas);
    }
    out(`\nrebalance: ${run.rebalanceIngress.kind === 'kafka' ? `over Kafka (${run.rebalanceIngress.brokers.join(',')})` : `over HTTP — ${run.rebalanceIngress.why}`}`);
    if (values.verbose) {
      out('\nper cell:\n');
      out(cellTable(cells));
    }
    out(`\n${total} cells in ${duration(run.elapsedMs)} (${run.effectdStarts} effectd process starts, SIGKILL restarts included).`);
    if (values.quick) {
      // effectd's lanes set the pace: scale by how many effectd cells the full matrix has.
      const full = planCells({ workloads, faults, policies, seeds: Array.from({ length: DEFAULT_SEEDS }, (_, i) => i + 1), redecideFaults: [...FAULTS], failAt: 'all' });
      const ratio = full.filter((c) => isEffectd(c.policy)).length / Math.max(1, cells.filter((c) => isEffectd(c.policy)).length);
      out(`The full matrix (\`effectd bench\`: ${DEFAULT_SEEDS} seeds, every failAt, effectd+redecide under every fault) is ${full.length} cells, roughly ${duration(run.elapsedMs * ratio)} on this machine.`);
    }

    if (values.json) {
      const file = resolve(String(values.json));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify(cells, null, 1)}\n`);
      out(`JSON: ${file}`);
    }
    if (values.svg) {
      const file = resolve(String(values.svg));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, renderSvg(cells, `${workloads.length} workloads × ${faults.length} faults × ${policies.length} policies × ${seedCount} seed${seedCount === 1 ? '' : 's'}, summed over workloads${seedCount > 1 ? ', mean per seed' : ''}`));
      out(`SVG: ${file}`);
    }

    const broken = cells.filter((c) => c.error !== undefined);
    const silent = cells.filter((c) => c.fault !== 'none' && c.error === undefined && c.faultInjected === 0);
    const failures = cells.filter((c) => isEffectd(c.policy) && failsPromise(c));
    if (broken.length > 0) out(`\n${broken.length} cell(s) broke (the benchmark itself failed; effectd's log: ${run.effectdLog ?? 'n/a'}):\n${broken.map((c) => `  ${cellLine(c)}`).join('\n')}`);
    if (silent.length > 0) out(`\n${silent.length} faulted cell(s) where the fault never fired (they prove nothing):\n${silent.map((c) => `  ${c.workload} × ${c.fault} × ${c.policy}`).join('\n')}`);
    if (failures.length > 0) {
      const stalled = (c: CellResult) => ((c.benchStallMs ?? 0) > STALL_LIMIT_MS ? `  (the benchmark's own process stalled ${c.benchStallMs} ms during this cell: its simulated providers could not keep their contracts' timing)` : '');
      out(`\nFAIL: effectd produced duplicates, missing effects, false deduplication, an undetected late arrival or a saga left wrong in ${failures.length} cell(s):\n${failures.map((c) => `  ${cellLine(c)}${stalled(c)}`).join('\n')}`);
      return 1;
    }
    if (broken.length > 0 || silent.length > 0) return 1;
    if (policies.some(isEffectd)) {
      const sagaChecks = cells.some((c) => c.sagaOutcome !== undefined && isEffectd(c.policy)) ? ', and every saga passed the four "never" checks' : '';
      // Duplicates a provider caused by breaking its contract, each detected by effectd (undetected ones failed above): said, never hidden.
      const providers = cells.filter((c) => isEffectd(c.policy) && c.duplicates > 0);
      const count = providers.reduce((s, c) => s + c.duplicates, 0);
      // Requests that reached the provider after effectd proved them absent: each must have been found and queued (an undetected one failed above).
      const late = cells.filter((c) => isEffectd(c.policy)).reduce((s, c) => s + (c.lateDetected ?? 0), 0);
      if (late > 0) out(`\nLate arrivals: ${late} request(s) reached the provider after effectd had proven them absent; each was found by the audit of that proof, recorded (LateArrivalDetected) and queued for an operator with its undo.`);
      if (count === 0) out(`\nOK: effectd had no duplicate, no missing effect and no false deduplication in any cell${sagaChecks}.`);
      else out(`\nOK: effectd had no missing effect and no false deduplication in any cell${sagaChecks}, and no duplicate it could prevent: ${count} duplicate${count === 1 ? '' : 's'}, caused by the provider's retention (${CONTRACT_BREAKING_FAULTS.filter((f) => providers.some((c) => c.fault === f)).join(', ')}: the provider forgot keys sooner than its contract says), ${count === 1 ? 'detected' : 'each detected'} and queued for an operator with its compensation, in ${providers.length} cell${providers.length === 1 ? '' : 's'}: ${providers.map((c) => `${c.workload} × ${c.fault} × ${c.policy}`).join(', ')}.`);
    }
    return 0;
  },
};

/** `--lane mcp-no-identity`: the no-identity options side by side (packages/bench/src/no-identity-lane.ts). */
async function runLane(lane: string, seedCount: number, out: (line: string) => void): Promise<number> {
  if (lane !== 'mcp-no-identity') throw new Error(`--lane: unknown ${lane}; choose mcp-no-identity`);
  const [{ EPISODES, runNoIdentityLane }, { NO_IDENTITY_OPTIONS }, { noIdentityTable }] = await Promise.all([import('./no-identity-lane.js'), import('./no-identity-options.js'), import('./no-identity-table.js')]);
  const started = Date.now();
  out(`effectd bench --lane mcp-no-identity: ${NO_IDENTITY_OPTIONS.length} options × ${seedCount} seed${seedCount === 1 ? '' : 's'} × ${EPISODES.length} episodes (${EPISODES.join(', ')}); a desktop-style client (the official MCP client SDK over stdio to effectd mcp) sending no _meta`);
  for (const o of NO_IDENTITY_OPTIONS) out(`  ${o.name.padEnd(20)} ${o.what}`);
  const cells = await runNoIdentityLane({
    seeds: Array.from({ length: seedCount }, (_, i) => i + 1),
    onCell: (c) => {
      if (c.error !== undefined || c.duplicates > 0 || c.falseDedup > 0) out(`  ${c.option} × seed ${c.seed} × ${c.episode}: intended ${c.intended}, charged ${c.charged}, answers ${c.finals.join(',')}${c.error ? `, BROKE: ${c.error}` : ''}`);
    },
  });
  out('\nper option, summed over episodes and seeds (d/f/r: duplicates / false dedups / refusals):\n');
  out(noIdentityTable(cells));
  out(`\n${cells.length} episodes in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  const broken = cells.filter((c) => c.error !== undefined);
  if (broken.length > 0) out(`${broken.length} episode(s) broke (the benchmark itself failed).`);
  return broken.length > 0 ? 1 : 0;
}

/**
 * What the promise forbids outright: unresolved is allowed (it is honest), a guess is not; nor is
 * a saga left wrong, nor a duplicate effectd did not detect.
 */
function failsPromise(cell: CellResult): boolean {
  // A duplicate counts unless the provider broke its contract and effectd detected it (names.ts: undetectedDuplicates).
  return undetectedDuplicates(cell) > 0 || cell.missing > 0 || cell.falseDedup > 0
    || (cell.emailWithoutCharge ?? 0) > 0 || (cell.leftInPlace ?? 0) > 0 || (cell.compensatedTwice ?? 0) > 0 || (cell.phantomCompensations ?? 0) > 0;
}

function positiveInt(flag: string, value: string | boolean): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} needs a whole number >= 1, not "${String(value)}"`);
  return n;
}

function probability(value: string | boolean): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`--redecide needs a probability from 0 to 1, not "${String(value)}"`);
  return n;
}
