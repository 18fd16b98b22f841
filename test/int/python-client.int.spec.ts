import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../support/run-captured.js';

/**
 * The Python client (clients/python, `effectd-client`, import `effectd`): its pytest suite against
 * a live `effectd start` on the payments simulator — the client, the LangGraph and OpenAI Agents
 * SDK wrappers, and the two crash labs (each prints provider-counted charges without and with
 * effectd). Python is the machine's python3; the pinned dependencies
 * (clients/python/requirements-test.txt) go into a virtualenv this test creates once under
 * ~/.cache/effectd-ci/pyenv-<hash of the requirements and the Python version> and reuses after
 * (EFFECTD_PY_VENV overrides). When the virtualenv cannot be made (no python3 venv, PyPI
 * unreachable) the suite is reported as skipped with the reason, never as a pass.
 */
const root = resolve('.');
const clientDir = join(root, 'clients', 'python');
const requirements = join(clientDir, 'requirements-test.txt');

const run = runCaptured;

const tail = (text: string) => text.trim().split('\n').slice(-3).join(' ');

/** The virtualenv with the pinned requirements, made once per requirements file and Python (undefined: ready; a string: why not). */
async function ensureVenv(): Promise<{ python: string } | string> {
  const version = await run('python3', ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { timeoutMs: 30_000 });
  if (version.status !== 0) return `python3 is not on this machine: ${tail(version.stderr)}`;
  const hash = createHash('sha256').update(readFileSync(requirements)).update(version.stdout.trim()).digest('hex').slice(0, 12);
  const venv = process.env.EFFECTD_PY_VENV ?? join(homedir(), '.cache', 'effectd-ci', `pyenv-${hash}`);
  const python = join(venv, 'bin', 'python');
  const complete = join(venv, '.effectd-complete');
  if (existsSync(python) && existsSync(complete)) return { python };
  // Made beside it and renamed into place, so a run beside this one (another clone, the same
  // requirements) never uses a half-made virtualenv; only `python -m …` is run from it, which
  // does not care that it moved.
  mkdirSync(join(venv, '..'), { recursive: true });
  const building = `${venv}.${process.pid}.${Date.now()}`;
  const made = await run('python3', ['-m', 'venv', building], { timeoutMs: 120_000 });
  if (made.status !== 0) return `python3 -m venv ${building} failed: ${tail(made.stderr)}`;
  const pip = await run(join(building, 'bin', 'python'), ['-m', 'pip', 'install', '--disable-pip-version-check', '-q', '-r', requirements], { timeoutMs: 600_000 });
  if (pip.status !== 0) {
    rmSync(building, { recursive: true, force: true });
    return `pip install -r clients/python/requirements-test.txt failed (PyPI unreachable?): ${tail(pip.stderr)}`;
  }
  writeFileSync(join(building, '.effectd-complete'), `${new Date().toISOString()}\n`);
  if (existsSync(venv) && !existsSync(complete)) rmSync(venv, { recursive: true, force: true });
  try {
    renameSync(building, venv);
  } catch {
    rmSync(building, { recursive: true, force: true }); // another run put one in place first
  }
  return existsSync(complete) ? { python } : `the virtualenv ${venv} is not complete after pip install`;
}

const venv = await ensureVenv();

(typeof venv === 'string' ? describe.skip : describe)(typeof venv === 'string' ? `skipped: the Python client's environment is unavailable: ${venv}` : "the Python client (clients/python): pytest against a live effectd, the LangGraph and OpenAI Agents SDK crash labs", () => {
  it('pytest passes; each crash lab charges once per crash through effectd', async () => {
    const { python } = venv as { python: string };
    const started = Date.now();
    const out = await run(python, ['-m', 'pytest', '-q', '-s', '-p', 'no:cacheprovider', 'tests'], {
      cwd: clientDir, timeoutMs: 540_000,
      env: { ...process.env, EFFECTD_REPO: root, EFFECTD_NODE: process.execPath },
    });
    const labLines = out.stdout.split('\n').filter((line) => / charges without effectd, /.test(line) || /^ {2}(before|after)-commit/.test(line));
    const summary = out.stdout.trim().split('\n').pop() ?? '';
    console.log(`pytest (${((Date.now() - started) / 1000).toFixed(1)} s): ${summary}\n${labLines.join('\n')}`);
    expect(out.status, `${out.stdout.slice(-4000)}\n${out.stderr.slice(-3000)}`).toBe(0);
    expect(summary).toMatch(/\d+ passed/);
    expect(labLines.filter((line) => / charges without effectd, /.test(line))).toHaveLength(2);
  }, 600_000);
});
