// `effectd bench --limbo --quick` (issue 29, part 3): LIMBO's fault modes and named cases, run as a
// user runs them, against real effectd processes and the simulated providers; scored by LIMBO's
// measures. effectd: no duplicate and no overclaim; the faults bite (a baseline duplicates).
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CellResult } from '../../packages/bench/src/cell-runner.js';
import { caseOf, LIMBO_QUICK_CASES } from '../../packages/bench/src/limbo/limbo-cases.js';
import type { LimboTotals } from '../../packages/bench/src/limbo/limbo-measures.js';
import { POLICIES } from '../../packages/bench/src/names.js';
import { ensureBuilt, tempDir } from '../support/effectd-harness.js';

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/effectd.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('effectd bench --limbo --quick', () => {
  let run: { code: number | null; stdout: string; stderr: string };
  let cells: CellResult[];
  let totals: Record<string, LimboTotals>;
  const dir = tempDir('effectd-bench-limbo-');

  beforeAll(async () => {
    await ensureBuilt();
    run = await runCli(['bench', '--limbo', '--quick', '--json', join(dir, 'limbo.json')]);
    if (run.code !== 0) console.error(run.stdout, run.stderr);
    ({ cells, totals } = JSON.parse(readFileSync(join(dir, 'limbo.json'), 'utf8')) as { cells: CellResult[]; totals: Record<string, LimboTotals> });
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every quick case against every policy, exits 0 and prints LIMBO\'s measures per policy', () => {
    expect(run.code).toBe(0);
    expect(cells.filter((c) => c.error !== undefined).map((c) => `${c.workload}/${c.fault}/${c.policy}: ${c.error}`)).toEqual([]);
    expect(new Set(cells.map((c) => `${caseOf(c)?.name}/${c.policy}`)).size).toBe(LIMBO_QUICK_CASES.length * POLICIES.length);
    expect(run.stdout).toMatch(/policy\s+cells\s+task success\s+exactly-once success\s+duplicates\s+collateral\s+overclaim/);
    for (const policy of POLICIES) expect(run.stdout).toMatch(new RegExp(`^${policy}\\s+${LIMBO_QUICK_CASES.length}\\s+\\d+/${LIMBO_QUICK_CASES.length} \\(\\d+%\\)`, 'm'));
    expect(run.stdout).toMatch(/OK: effectd had no duplicate and no overclaim in any LIMBO cell\./);
  });

  it('every faulted cell really injected its fault, and every cell carries LIMBO\'s measures', () => {
    expect(cells.filter((c) => c.fault !== 'none' && c.faultInjected === 0).map((c) => `${c.workload}/${c.fault}/${c.policy}`)).toEqual([]);
    for (const cell of cells) expect(cell.limbo).toEqual({ taskSuccess: expect.any(Boolean), exactlyOnce: expect.any(Boolean), duplicates: expect.any(Number), collateral: expect.any(Number), overclaim: expect.any(Number) });
  });

  it('effectd: 0 duplicates and 0 overclaim, with its task and exactly-once success reported beside the baselines\'', () => {
    const effectd = totals.effectd!;
    expect(effectd).toMatchObject({ cells: LIMBO_QUICK_CASES.length, duplicates: 0, overclaim: 0, collateral: 0 });
    // Every effect effectd settled is exactly once; a task it did not finish is one it said it could not prove (truth unavailable: `unknown` blocks).
    expect(effectd.exactlyOnce).toBe(effectd.taskSuccess);
    expect(effectd.taskSuccess).toBeGreaterThanOrEqual(LIMBO_QUICK_CASES.length - 1);
    for (const policy of POLICIES) expect(totals[policy]).toBeDefined();
  });

  it('the faults bite: the baselines duplicate and overclaim, blind retry in every faulted case', () => {
    expect(totals.blind!.duplicates).toBeGreaterThanOrEqual(LIMBO_QUICK_CASES.length);
    expect(totals.blind!.overclaim).toBeGreaterThan(0);
    expect(totals['sdk-retry']!.duplicates).toBeGreaterThan(0);
    expect(totals.blind!.exactlyOnce).toBeLessThan(totals.effectd!.exactlyOnce);
  });

  it('truth unavailable: effectd\'s `unknown` blocks the dependent email (no overclaim), where blind retry sends both and duplicates the notification', () => {
    const cell = (policy: string) => cells.find((c) => caseOf(c)?.name === 'truth-unavailable-blocks' && c.policy === policy)!;
    expect(cell('effectd').intents.map((i) => i.status)).toEqual(['escalated', 'blocked']);
    expect(cell('effectd').limbo).toMatchObject({ taskSuccess: false, duplicates: 0, overclaim: 0 });
    expect(cell('blind').limbo).toMatchObject({ duplicates: 1, overclaim: 1 });
  });
});
