import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error the fleet harness is plain ESM JavaScript (test/fleet/*.mjs), run by node without a build
import { checkOnDisk, REPO, SABOTAGE, sabotaged } from '../fleet/sabotage/kinds.mjs';

const KIND = 'lookup-404-is-absence';
const hook = join(REPO, 'test/fleet/sabotage/hook.mjs');
const node = (env: Record<string, string>, code: string) => spawnSync(process.execPath, ['--import', hook, '--input-type=module', '-e', code], { cwd: REPO, env: { ...process.env, ...env }, encoding: 'utf8' });

describe('the fleet sabotage hook (a deliberately broken build, harness only)', () => {
  const file = join(REPO, SABOTAGE[KIND].file);

  it('finds its line once in the current dist/ and rewrites exactly that line', () => {
    const source = readFileSync(file, 'utf8');
    const out = sabotaged(KIND, source);
    expect(out).not.toBeInstanceOf(Error);
    expect(out).not.toBe(source);
    expect(out).toContain("seen: result.seen, verdict: 'not_committed' }");
    expect(out.split('\n').filter((l: string, i: number) => l !== source.split('\n')[i])).toHaveLength(1);
    expect(checkOnDisk(KIND)).toBeUndefined();
  });

  it.each(Object.keys(SABOTAGE))('%s: its line is in the current dist/ once, and one line changes', (kind) => {
    const source = readFileSync(join(REPO, SABOTAGE[kind].file), 'utf8');
    const out = sabotaged(kind, source);
    expect(checkOnDisk(kind)).toBeUndefined();
    expect(out.split('\n').filter((l: string, i: number) => l !== source.split('\n')[i])).toHaveLength(1);
  });

  it('refuses when the pattern is gone (dist/ rebuilt from changed code), or a kind is unknown', () => {
    const changed = readFileSync(file, 'utf8').replace("verdict: 'pending' }", "verdict: 'pending', why: 'changed' }");
    expect(sabotaged(KIND, changed)).toBeInstanceOf(Error);
    expect(String(sabotaged(KIND, changed))).toMatch(/found 0 times .* update test\/fleet\/sabotage\/kinds\.mjs/);
    const repo = mkdtempSync(join(tmpdir(), 'sabotage-'));
    mkdirSync(dirname(join(repo, SABOTAGE[KIND].file)), { recursive: true });
    writeFileSync(join(repo, SABOTAGE[KIND].file), changed);
    expect(checkOnDisk(KIND, repo)?.message).toMatch(/found 0 times/);
    expect(checkOnDisk('no-such-kind')?.message).toMatch(/unknown sabotage "no-such-kind"/);
  });

  it('applies when effectd loads the file, and a process with an unknown kind exits 3 saying why', () => {
    const on = node({ EFFECTD_SABOTAGE: KIND }, "const m = await import('./dist/src/shell/provider-checks.js'); console.log(m.lookUp.toString().includes(\"verdict: 'not_committed'\"))");
    expect(on.status).toBe(0);
    expect(on.stdout.trim()).toBe('true');
    const off = spawnSync(process.execPath, ['--input-type=module', '-e', "const m = await import('./dist/src/shell/provider-checks.js'); console.log(m.lookUp.toString().includes(\"verdict: 'not_committed'\"))"], { cwd: REPO, encoding: 'utf8' });
    expect(off.stdout.trim()).toBe('false');
    const refused = node({ EFFECTD_SABOTAGE: 'no-such-kind' }, 'console.log("started")');
    expect(refused.status).toBe(3);
    expect(refused.stdout).not.toContain('started');
    expect(refused.stderr).toContain('refusing to start: unknown sabotage "no-such-kind"');
  });
});
