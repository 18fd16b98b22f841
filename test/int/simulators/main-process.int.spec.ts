import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const entry = `${root}packages/simulators/dist/main.js`;
const sources = `${root}packages/simulators/src`;

/** Builds the simulators' dist/ when the compiled entry is missing or older than any simulator source. */
function ensureBuilt(): void {
  const builtAt = existsSync(entry) ? statSync(entry).mtimeMs : 0;
  const stale = readdirSync(sources).some((f) => f.endsWith('.ts') && statSync(`${sources}/${f}`).mtimeMs > builtAt);
  if (!stale) return;
  spawnSync('npm', ['run', 'build', '--silent', '--workspace', '@effectd/simulators'], { cwd: root, stdio: 'ignore' });
  if (!existsSync(entry)) throw new Error(`build did not produce ${entry}`);
}

function readyLine(child: ChildProcess): Promise<{ ready: boolean; kind: string; url: string }> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`simulator exited early with ${code}`)));
  });
}

const exited = (child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

describe('simulator as a separate process', () => {
  beforeAll(ensureBuilt, 60_000);

  it('prints a ready line, serves a charge, and dies on SIGKILL', async () => {
    const child = spawn(process.execPath, [entry, 'payments', '--port', '0', '--seed', '9', '--search-lag-ms', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const ready = await readyLine(child);
      expect(ready).toMatchObject({ ready: true, kind: 'payments', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
      const res = await fetch(`${ready.url}/v1/charges`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'Idempotency-Key': 'proc-1' },
        body: 'amount=2500&currency=usd&metadata[effect_ref]=eff-proc',
      });
      expect(res.status).toBe(200);
      expect((await res.json()).id).toBe('ch_9_000001');
      const search = await fetch(`${ready.url}/v1/charges/search?query=${encodeURIComponent("metadata['effect_ref']:'eff-proc'")}`);
      expect((await search.json()).data).toHaveLength(1);
    } finally {
      const gone = exited(child);
      child.kill('SIGKILL');
      expect((await gone).signal).toBe('SIGKILL');
    }
  });

  it('exits cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [entry, 'weak'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await readyLine(child);
    const gone = exited(child);
    child.kill('SIGTERM');
    expect(await gone).toEqual({ code: 0, signal: null });
  });

  it('prints usage for --help and refuses an unknown kind', () => {
    const help = spawnSync(process.execPath, [entry, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage:');
    const bad = spawnSync(process.execPath, [entry, 'fax'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('Expected a kind');
  });
});
