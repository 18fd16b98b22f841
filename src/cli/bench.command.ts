import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { CellResult } from '../bench/cell-runner.js';
import { FAULTS, isFault, isPolicy, POLICIES, type FaultName, type PolicyName } from '../bench/names.js';
import { DEFAULT_WORKLOADS, workloadNames } from '../bench/workloads.js';
import type { CommandSpec } from './cli-kit.js';

const DEFAULT_SEEDS = 3;

export const benchCommand: CommandSpec = {
  name: 'bench',
  summary: 'The adversarial benchmark: workloads × faults × policies × seeds against simulated providers; ground truth from their oracles.',
  usage: 'effectd bench [--quick] [--workload a,b] [--fault a,b] [--policy a,b] [--seeds N] [--json FILE] [--svg FILE]',
  options: {
    quick: { type: 'boolean' },
    workload: { type: 'string' },
    fault: { type: 'string' },
    policy: { type: 'string' },
    seeds: { type: 'string' },
    json: { type: 'string' },
    svg: { type: 'string' },
    concurrency: { type: 'string' },
    ledger: { type: 'string' },
    redecide: { type: 'string' },
    verbose: { type: 'boolean' },
  },
  optionHelp: [
    ['--quick', `1 seed of the whole matrix (under 2 minutes on 2 cores)`],
    ['--workload LIST', `comma-separated (default: ${DEFAULT_WORKLOADS.join(', ')})`],
    ['--fault LIST', `comma-separated (default: all: ${FAULTS.join(', ')})`],
    ['--policy LIST', `comma-separated (default: all: ${POLICIES.join(', ')})`],
    ['--seeds N', `seeds 1..N per cell (default ${DEFAULT_SEEDS}; 1 with --quick)`],
    ['--json FILE', 'write one JSON object per cell (an array), with the agent transcript'],
    ['--svg FILE', 'write a chart: duplicates, missing and unresolved per policy per fault'],
    ['--concurrency N', 'baseline cells run N at a time (default 3); effectd cells run one at a time'],
    ['--ledger URL', 'ledger of the benchmark\'s effectd instances (default SQLite in a temp dir; or postgres://…)'],
    ['--redecide P', 'probability that the effectd agent ignores "do not start another" and decides again on unknown (default 0)'],
    ['--verbose', 'print one line per cell while it runs, and the per-cell table at the end'],
  ],
  async run(values) {
    // Every effectd command line loads this file; the benchmark's machinery (simulators, proxies) only when it runs.
    const [{ runMatrix }, { cellLine, cellTable, duration, faultTable, policyTable }, { renderSvg }, { FAULT_SPECS }] = await Promise.all([
      import('../bench/matrix.js'), import('../bench/report-table.js'), import('../bench/report-svg.js'), import('../bench/faults.js'),
    ]);
    const list = <T extends string>(flag: string, all: readonly T[], valid: (s: string) => boolean): T[] => {
      const raw = values[flag];
      if (raw === undefined || raw === 'all') return [...all];
      const items = String(raw).split(',').map((s) => s.trim()).filter(Boolean);
      const bad = items.filter((s) => !valid(s));
      if (bad.length > 0) throw new Error(`--${flag}: unknown ${bad.join(', ')}; choose from ${all.join(', ')}`);
      return items as T[];
    };
    const workloads = list<string>('workload', DEFAULT_WORKLOADS, (s) => workloadNames().includes(s));
    const faults = list<FaultName>('fault', FAULTS, isFault);
    const policies = list<PolicyName>('policy', POLICIES, isPolicy);
    const seedCount = values.seeds !== undefined ? positiveInt('seeds', values.seeds) : values.quick ? 1 : DEFAULT_SEEDS;
    const concurrency = values.concurrency !== undefined ? positiveInt('concurrency', values.concurrency) : 3;
    const redecide = values.redecide !== undefined ? probability(values.redecide) : undefined;
    const seeds = Array.from({ length: seedCount }, (_, i) => i + 1);
    const total = workloads.length * faults.length * policies.length * seeds.length;
    const tty = process.stdout.isTTY === true;
    // Exiting (rather than dying on the signal) runs the handler that SIGKILLs the bench's effectd processes.
    const interrupted = (signal: string) => {
      process.stderr.write(`\neffectd bench: ${signal}; stopping\n`);
      process.exit(130);
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    const out = (line = '') => process.stdout.write(`${line}\n`);

    out(`effectd bench${values.quick ? ' --quick' : ''}: ${workloads.length} workloads × ${faults.length} faults × ${policies.length} policies × ${seedCount} seed${seedCount === 1 ? '' : 's'} = ${total} cells`);
    out(`(baseline cells ${concurrency} at a time; effectd cells one at a time through real effectd processes; ground truth from the providers' oracles)\n`);
    if (values.verbose) out(`${faults.map((f) => `  ${f.padEnd(16)} ${FAULT_SPECS[f].boundary}`).join('\n')}\n`);

    let lastLine = 0;
    const run = await runMatrix({
      workloads, faults, policies, seeds, concurrency, redecide,
      ...(values.ledger ? { ledgerUrl: String(values.ledger) } : {}),
      onCell(result, p) {
        const status = `[${String(p.done).padStart(String(p.total).length)}/${p.total}  ${duration(p.elapsedMs)} elapsed, ETA ${duration(p.etaMs)}]`;
        const notable = result.error !== undefined || (result.policy === 'effectd' && failsPromise(result)) || (result.fault !== 'none' && result.faultInjected === 0);
        if (values.verbose || notable) {
          if (tty) process.stdout.write('\r\x1b[K');
          out(`${status} ${cellLine(result)}${notable && result.policy === 'effectd' && failsPromise(result) ? '  <-- effectd broke its promise' : ''}${result.fault !== 'none' && result.faultInjected === 0 && !result.error ? '  <-- fault never fired' : ''}`);
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
    out(`\nduplicates / missing / unresolved, per fault and policy (summed over ${workloads.length} workloads × ${seedCount} seed${seedCount === 1 ? '' : 's'}):\n`);
    out(faultTable(cells));
    out('\nper policy:\n');
    out(policyTable(cells));
    if (values.verbose) {
      out('\nper cell:\n');
      out(cellTable(cells));
    }
    out(`\n${total} cells in ${duration(run.elapsedMs)} (${run.effectdStarts} effectd process starts, SIGKILL restarts included).`);
    if (values.quick) out(`The full matrix with the default ${DEFAULT_SEEDS} seeds (\`effectd bench\`) takes about ${duration(run.elapsedMs * DEFAULT_SEEDS)} on this machine.`);

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
    const failures = cells.filter((c) => c.policy === 'effectd' && failsPromise(c));
    if (broken.length > 0) out(`\n${broken.length} cell(s) broke (the benchmark itself failed; effectd's log: ${run.effectdLog ?? 'n/a'}):\n${broken.map((c) => `  ${cellLine(c)}`).join('\n')}`);
    if (silent.length > 0) out(`\n${silent.length} faulted cell(s) where the fault never fired (they prove nothing):\n${silent.map((c) => `  ${c.workload} × ${c.fault} × ${c.policy}`).join('\n')}`);
    if (failures.length > 0) {
      out(`\nFAIL: effectd produced duplicates, missing effects or false deduplication in ${failures.length} cell(s):\n${failures.map((c) => `  ${cellLine(c)}`).join('\n')}`);
      return 1;
    }
    if (broken.length > 0 || silent.length > 0) return 1;
    if (policies.includes('effectd')) out('\nOK: effectd had no duplicate, no missing effect and no false deduplication in any cell.');
    return 0;
  },
};

/** What the promise forbids outright: unresolved is allowed (it is honest), a guess is not. */
function failsPromise(cell: CellResult): boolean {
  return cell.duplicates > 0 || cell.missing > 0 || cell.falseDedup > 0;
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
