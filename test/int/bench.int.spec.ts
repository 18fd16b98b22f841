import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CellResult } from '../../src/bench/cell-runner.js';
import { FAULTS, POLICIES } from '../../src/bench/names.js';
import { DEFAULT_WORKLOADS } from '../../src/bench/workloads.js';
import { ensureBuilt, tempDir } from '../support/effectd-harness.js';

/** Marks this run's processes (children inherit the environment), so other runs on the machine don't count. */
const MARK = `EFFECTD_BENCH_TEST_RUN=${randomUUID()}`;

/** Runs the CLI as CI does and returns its exit code and output. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const [name, value] = MARK.split('=') as [string, string];
    const child = spawn(process.execPath, ['bin/effectd.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, [name]: value } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Processes of this run still alive (the bench's effectd instances carry the mark in their environment). */
function stragglers(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(MARK)) continue;
      found.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return found;
}

describe('effectd bench --quick (the adversarial benchmark, as CI runs it)', () => {
  let run: { code: number | null; stdout: string; stderr: string };
  let cells: CellResult[];
  let svg: string;
  const dir = tempDir('effectd-bench-test-');
  const of = (filter: Partial<Pick<CellResult, 'workload' | 'fault' | 'policy'>>) =>
    cells.filter((c) => Object.entries(filter).every(([k, v]) => c[k as keyof CellResult] === v));
  const sum = (list: CellResult[], pick: (c: CellResult) => number) => list.reduce((s, c) => s + pick(c), 0);

  beforeAll(async () => {
    await ensureBuilt();
    run = await runCli(['bench', '--quick', '--json', join(dir, 'quick.json'), '--svg', join(dir, 'quick.svg')]);
    if (run.code !== 0) console.error(run.stdout, run.stderr);
    cells = JSON.parse(readFileSync(join(dir, 'quick.json'), 'utf8')) as CellResult[];
    svg = readFileSync(join(dir, 'quick.svg'), 'utf8');
  }, 240_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every workload × fault × policy, exits 0, prints the table, and leaves no process behind', () => {
    expect(run.code).toBe(0);
    expect(cells).toHaveLength(DEFAULT_WORKLOADS.length * FAULTS.length * POLICIES.length);
    expect(cells.filter((c) => c.error !== undefined).map((c) => `${c.workload}/${c.fault}/${c.policy}: ${c.error}`)).toEqual([]);
    expect(run.stdout).toMatch(/dup\/missing\/unresolved\s+blind\s+sdk-retry\s+native-or-never\s+effectd/);
    expect(run.stdout).toMatch(/OK: effectd had no duplicate/);
    expect(stragglers()).toEqual([]);
  });

  it('every cell carries the fields results are compared by', () => {
    for (const cell of cells) {
      for (const field of ['workload', 'fault', 'policy', 'seed', 'declared', 'duplicates', 'missing', 'falseDedup', 'unresolved', 'escalations', 'timeInUnknownMs', 'wrongReceipt']) expect(cell).toHaveProperty(field);
      expect(cell.latencyMs).toEqual({ p50: expect.any(Number), p99: expect.any(Number) });
      expect(cell.declared).toBeGreaterThan(0);
      expect(cell.transcript.length).toBeGreaterThan(0);
    }
  });

  it('the faults really fired: every faulted cell injected its fault at least once', () => {
    const silent = cells.filter((c) => c.fault !== 'none' && c.faultInjected === 0).map((c) => `${c.workload}/${c.fault}/${c.policy}`);
    expect(silent).toEqual([]);
  });

  it('effectd: no duplicate, no missing effect, no false deduplication, and no wrong receipt in any cell', () => {
    const effectd = of({ policy: 'effectd' });
    expect(effectd).toHaveLength(DEFAULT_WORKLOADS.length * FAULTS.length);
    const broken = effectd.filter((c) => c.duplicates + c.missing + c.falseDedup + c.wrongReceipt > 0).map((c) => `${c.workload}/${c.fault}: dup ${c.duplicates} missing ${c.missing} falseDedup ${c.falseDedup} wrongReceipt ${c.wrongReceipt}`);
    expect(broken).toEqual([]);
  });

  it('the harness can fail: blind retries duplicate every keyed effect under post-commit response loss', () => {
    for (const workload of ['charge', 'email-5', 'cloud-create', 'append-line', 'charge-then-email']) {
      expect(of({ policy: 'blind', fault: 'after-mutation', workload })[0]!.duplicates, workload).toBeGreaterThan(0);
    }
    // ...and the library's same-key retries save the keyed tools but not the keyless one.
    expect(of({ policy: 'sdk-retry', fault: 'after-mutation', workload: 'charge' })[0]!.duplicates).toBe(0);
    expect(of({ policy: 'sdk-retry', fault: 'after-mutation', workload: 'append-line' })[0]!.duplicates).toBeGreaterThan(0);
  });

  it('the harness can fail: native-or-never leaves unresolved or missing effects on the weak tools', () => {
    const weak = of({ policy: 'native-or-never', workload: 'append-line' });
    expect(sum(weak, (c) => c.unresolved + c.missing)).toBeGreaterThan(0);
    // A native key does not outlive its retention: the retry after it duplicates.
    expect(sum(of({ policy: 'native-or-never', fault: 'key-expired' }), (c) => c.duplicates)).toBeGreaterThan(0);
  });

  it('what effectd cannot settle by itself (no key, no lookup) is escalated to a human, never guessed', () => {
    const notify = of({ policy: 'effectd', workload: 'notify', fault: 'after-mutation' })[0]!;
    expect(notify).toMatchObject({ duplicates: 0, missing: 0, unresolved: 1, escalations: 1 });
    expect(notify.intents[0]).toMatchObject({ status: 'escalated', state: 'escalated', present: 1 });
    // The same tool's effect that never happened is escalated too: effectd cannot tell the two apart.
    expect(of({ policy: 'effectd', workload: 'notify', fault: 'before-mutation' })[0]!.intents[0]).toMatchObject({ status: 'escalated', present: 0 });
  });

  it('writes a chart a person can open', () => {
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    for (const name of [...FAULTS, ...POLICIES]) expect(svg).toContain(`>${name}<`);
    expect(svg).toContain('Duplicates');
    expect(svg).toContain('Missing');
  });
});
