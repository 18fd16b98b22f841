import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll } from 'vitest';
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import { loadSettings, type Environment } from '../../src/config/settings-loader.js';
import { createRuntime, type EffectdRuntime, type RuntimeOptions } from '../../src/runtime/effectd-runtime.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
export { writeFastPaymentsConfig, writeToolsConfig } from '../../packages/bench/src/harness/tool-config-files.js';

export function tempDir(prefix = 'effectd-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface InProcessEffectd {
  runtime: EffectdRuntime;
  server: HttpServer;
  url: string;
  /** Authorization headers of the default agent and operator credentials. */
  agent: Record<string, string>;
  operator: Record<string, string>;
  close(): Promise<void>;
}

/** The Authorization header of the first credential with that role in `<dataDir>/credentials.json`. */
export function authHeaders(dataDir: string, role: 'agent' | 'operator'): Record<string, string> {
  const { credentials } = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { credentials: { token: string; role: string }[] };
  const found = credentials.find((c) => c.role === role);
  if (!found) throw new Error(`no ${role} credential in ${dataDir}`);
  return { authorization: `Bearer ${found.token}` };
}

/**
 * effectd (runtime + HTTP ingress) in this process, on a fresh data dir unless given one. Its
 * settings: `settings`, else loaded from `env` (default: none set, whatever this process's
 * environment holds), as the CLI would load them.
 */
export async function startEffectd(options: Partial<RuntimeOptions> & { env?: Environment } = {}): Promise<InProcessEffectd> {
  const { env, ...runtimeOptions } = options;
  const dataDir = options.dataDir ?? tempDir();
  const settings = options.settings ?? loadSettings(env ?? {});
  const runtime = await createRuntime({ reconcileTickMs: 50, ...runtimeOptions, settings, dataDir });
  const server = await startHttpServer(runtime, 0, '127.0.0.1', settings.http);
  runtime.startReconciler();
  return {
    runtime, server, url: server.url, agent: authHeaders(dataDir, 'agent'), operator: authHeaders(dataDir, 'operator'),
    close: async () => {
      await server.close();
      await runtime.close();
    },
  };
}

/** A suite's effectd and payments simulator, as the suite sees them once its beforeAll ran. */
export interface SuiteEffectd {
  readonly effectd: InProcessEffectd;
  readonly payments: RunningSimulator;
}

/**
 * The suite's effectd on a payments simulator: started before the suite's own beforeAll hooks
 * (call it first in the describe), closed after its tests, effectd before the provider.
 */
export function suiteEffectd(options: { payments?: Record<string, unknown>; effectd?: Partial<RuntimeOptions> & { env?: Environment } } = {}): SuiteEffectd {
  let effectd: InProcessEffectd | undefined;
  let payments: RunningSimulator | undefined;
  beforeAll(async () => {
    payments = await startPayments(options.payments);
    effectd = await startEffectd({ ...options.effectd, providerUrls: { payments: payments.url, ...options.effectd?.providerUrls } });
  });
  afterAll(async () => {
    await effectd?.close();
    await payments?.close();
  });
  const started = <T>(part: T | undefined, name: string): T => {
    if (part === undefined) throw new Error(`the suite's ${name} is not started: use it in a test or a later hook`);
    return part;
  };
  return {
    get effectd() {
      return started(effectd, 'effectd');
    },
    get payments() {
      return started(payments, 'payments simulator');
    },
  };
}

export async function startPayments(options: Record<string, unknown> = {}): Promise<RunningSimulator> {
  return startSimulator('payments', { options });
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, body: body as any };
}

export interface EffectdProcess {
  url: string;
  child: ChildProcess;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `effectd start` as its own OS process (compiled dist/), so a test can SIGKILL it. */
export function spawnEffectd(args: string[], env: Record<string, string> = {}): Promise<EffectdProcess> {
  const child = spawn(process.execPath, ['bin/effectd.js', 'start', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`effectd did not start within 20 s: ${stderr}`)), 20_000);
    child.once('exit', (code) => reject(new Error(`effectd exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1]!, child,
        kill: (signal = 'SIGKILL') => new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill(signal);
        }),
      });
    });
  });
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** What a test that runs compiled processes needs: the service's dist/ and its workspaces' (the simulators, the benchmark). */
const BUILT = ['dist/src/cli/main.js', 'packages/simulators/dist/main.js', 'packages/bench/dist/packages/bench/src/index.js'];

/**
 * Builds when a test needs a compiled process and the test script did not build it: the simulators,
 * then the service, then the benchmark (the order of npm run build; without its clean of dist/, which
 * other test files may be running from).
 */
export async function ensureBuilt(): Promise<void> {
  const { existsSync } = await import('node:fs');
  if (BUILT.every((file) => existsSync(file)) && process.env.EFFECTD_SKIP_BUILD === '1') return;
  const { execFileSync } = await import('node:child_process');
  execFileSync('npm', ['run', 'build', '--silent', '--workspace', '@effectd/simulators'], { stdio: 'inherit' });
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  execFileSync('npm', ['run', 'build', '--silent', '--workspace', '@effectd/bench'], { stdio: 'inherit' });
}

