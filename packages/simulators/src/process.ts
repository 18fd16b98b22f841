import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CodedError } from './coded-error.js';

export interface SimulatorProcess {
  kind: string;
  url: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The compiled entry (dist/main.js of this package), found from this module whether it runs compiled
 * (dist/process.js, as effectd dev runs it) or from source (src/process.ts, under vitest).
 */
export function simulatorEntry(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new CodedError('internal', '@effectd/simulators: cannot find its package root');
    dir = parent;
  }
  return join(dir, 'dist', 'main.js');
}

/**
 * Runs a simulated provider in its own process, so killing effectd never kills the ground truth.
 * Needs the compiled simulators (dist/), which `npm run build` (or `npm install`, through this
 * package's prepare script) produces.
 */
export function spawnSimulator(kind: string, args: string[] = []): Promise<SimulatorProcess> {
  const entry = simulatorEntry();
  const child = spawn(process.execPath, [entry, kind, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new CodedError('unavailable', `simulator ${kind} did not become ready within 15 s`));
    }, 15_000);
    child.once('exit', (code) => reject(new CodedError('unavailable', `simulator ${kind} exited with code ${code} before it was ready (is ${entry} built? run npm run build)`)));
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      const ready = JSON.parse(line) as { url: string; pid: number };
      resolve({
        kind, url: ready.url, pid: ready.pid, child,
        stop: () => new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
        }),
      });
    });
  });
}

/** Calls a simulator's admin or oracle endpoint. */
export async function simulatorCall<T = unknown>(url: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new CodedError('unavailable', `${path} on ${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}
