import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The verdict of scripts/lib/conformance-summary.mjs over made-up results: what CI prints of the conformance run. */
type Status = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED';

function resultsDir(scenarios: Record<string, Record<string, Status>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'effectd-conformance-summary-'));
  for (const [scenario, checks] of Object.entries(scenarios)) {
    const at = join(dir, `server-${scenario}-2026-12-02T11-44-04-336Z`);
    mkdirSync(at);
    writeFileSync(join(at, 'checks.json'), JSON.stringify(Object.entries(checks).map(([id, status]) => ({ id, status, ...(status === 'SUCCESS' ? {} : { errorMessage: `${id} went wrong` }) }))));
  }
  return dir;
}

function summarize(expected: string, passes: Record<string, string>, unscored = ''): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'effectd-conformance-summary-'));
  writeFileSync(join(dir, 'expected.yaml'), expected);
  writeFileSync(join(dir, 'unscored.txt'), unscored);
  const run = spawnSync(process.execPath, ['scripts/lib/conformance-summary.mjs', join(dir, 'expected.yaml'), `--unscored=${join(dir, 'unscored.txt')}`, ...Object.entries(passes).map(([label, d]) => `${label}=${d}`)], { encoding: 'utf8' });
  return { status: run.status, out: run.stdout };
}

const EXPECTED = `server:
  # tools only: no prompts here
  - prompts-list
  - caching:prompts-hints

  - tasks-lifecycle # tasks: lands with branch mcp-tasks
`;

describe('the conformance summary', () => {
  it('one line per scenario, the reasons by the group comment or the trailing one, the summary; exit 0 when every failure is expected', () => {
    const active = resultsDir({ 'tools-list': { a: 'SUCCESS', b: 'SUCCESS' }, 'prompts-list': { c: 'FAILURE' } });
    const revision = resultsDir({ 'tools-list': { a: 'SUCCESS', b: 'SUCCESS' }, 'prompts-list': { c: 'FAILURE' }, caching: { 'tools-hints': 'SUCCESS', 'prompts-hints': 'WARNING' }, 'tasks-lifecycle': { d: 'FAILURE', e: 'SUCCESS' } });
    const { status, out } = summarize(EXPECTED, { active, '2026-07-28': revision }, 'tasks-lifecycle extension\n');
    expect(out).toContain('scenario tools-list: passed (2/2 checks, 2/2 checks) [active + 2026-07-28]');
    expect(out).toContain('scenario prompts-list: expected failure (0/1 checks, 0/1 checks) [active + 2026-07-28] — tools only');
    expect(out).toContain('scenario caching: expected failure (1/2 checks) [2026-07-28] — tools only');
    expect(out).toContain('scenario tasks-lifecycle: expected failure (1/2 checks) [2026-07-28, not scored: extension] — tasks');
    expect(out).toContain('MCP conformance: 4 scenarios; passed 1, skipped by the suite 0, expected failures 3, unexpected failures 0, stale expected failures 0');
    expect(out).toContain('  scored for the revision: 3 scenarios; passed 1, expected failures 2, unexpected failures 0, stale expected failures 0');
    expect(out).toContain('  expected (2): tools only: no prompts here — prompts-list, caching:prompts-hints');
    expect(out).toContain('  expected (1): tasks: lands with branch mcp-tasks — tasks-lifecycle');
    expect(status).toBe(0);
  });

  it('fails on a failure not listed (a WARNING counts), naming the check', () => {
    const { status, out } = summarize(EXPECTED, { run: resultsDir({ 'tools-list': { a: 'SUCCESS', b: 'WARNING' }, 'prompts-list': { c: 'FAILURE' }, caching: { 'prompts-hints': 'FAILURE' }, 'tasks-lifecycle': { d: 'FAILURE' } }) });
    expect(out).toContain('scenario tools-list: FAILED, not an expected failure (1/2 checks) [run]\n    b: b went wrong');
    expect(status).toBe(1);
  });

  it('fails on a listed scenario or check that passes, on an entry no pass ran, and on an entry without a reason', () => {
    const passing = resultsDir({ 'prompts-list': { c: 'SUCCESS' }, caching: { 'prompts-hints': 'SUCCESS' }, 'tasks-lifecycle': { d: 'FAILURE' } });
    const stale = summarize(EXPECTED, { run: passing });
    expect(stale.out).toContain('scenario prompts-list: FAILED, a stale expected failure');
    expect(stale.out).toContain('listed check caching:prompts-hints passes: remove it');
    expect(stale.status).toBe(1);
    const notRun = summarize(EXPECTED, { run: resultsDir({ 'prompts-list': { c: 'FAILURE' }, caching: { 'prompts-hints': 'FAILURE' } }) });
    expect(notRun.out).toContain('expected failure tasks-lifecycle: no pass ran this scenario');
    expect(notRun.status).toBe(1);
    const noReason = summarize('server:\n  - prompts-list\n', { run: resultsDir({ 'prompts-list': { c: 'FAILURE' } }) });
    expect(noReason.out).toContain('expected failure prompts-list: has no reason');
    expect(noReason.status).toBe(1);
  });

  it('fails when the passes disagree on a scenario', () => {
    const { status, out } = summarize(EXPECTED, {
      one: resultsDir({ 'tools-list': { a: 'SUCCESS' }, 'prompts-list': { c: 'FAILURE' }, caching: { 'prompts-hints': 'FAILURE' }, 'tasks-lifecycle': { d: 'FAILURE' } }),
      two: resultsDir({ 'tools-list': { a: 'FAILURE' } }),
    });
    expect(out).toContain('scenario tools-list: FAILED — the passes disagree: one passed, two unexpected');
    expect(status).toBe(1);
  });
});
