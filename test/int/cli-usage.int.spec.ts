import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/effectd-harness.js';

const effectd = (...args: string[]) => spawnSync(process.execPath, ['bin/effectd.js', ...args], { encoding: 'utf8' });

describe('the CLI answers like a tool people use', () => {
  beforeAll(async () => {
    await ensureBuilt();
  });

  it('--version (and -v, version) print the package version', () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-v', 'version']) {
      const run = effectd(flag);
      expect(run.status, flag).toBe(0);
      expect(run.stdout, flag).toBe(`effectd ${version}\n`);
    }
  });

  it('an unknown flag or a flag without its value gets a usage line in the command\'s terms, not Node\'s parser message', () => {
    const unknown = effectd('start', '--bogus');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^effectd start: unknown option --bogus; the options of effectd start are below\n/);
    expect(unknown.stderr).toMatch(/Usage: effectd start /);
    expect(unknown.stderr).not.toMatch(/positional argument/);
    const missing = effectd('start', '--port');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--port <value> needs a value/);
  });

  it('the package carries its license', () => {
    expect(readFileSync('LICENSE', 'utf8')).toMatch(/Apache License\s+Version 2\.0/);
  });
});
