import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { packageRoot } from '../../../../src/shared/package-root.js';

export interface EffectdProcess {
  pid: number;
  child: ChildProcess;
  /** The HTTP ingress, unless started with --no-http. */
  url?: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnOptions {
  /** Another effectd checkout (built) to run instead of this package, e.g. a baseline for a benchmark. */
  root?: string;
}

/**
 * `effectd start …` in its own process (compiled dist/). Ready once it printed every line it
 * promises for its flags: "listening on URL" (HTTP) and/or "consuming …" (Kafka).
 */
export function spawnEffectdProcess(args: string[], env: Record<string, string> = {}, options: SpawnOptions = {}): Promise<EffectdProcess> {
  // EFFECTD_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") reaches only the effectd processes; NODE_OPTIONS refuses --cpu-prof.
  const nodeArgs = (process.env.EFFECTD_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(options.root ?? packageRoot(), 'bin', 'effectd.js'), 'start', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const wantsHttp = !args.includes('--no-http');
  const wantsKafka = args.includes('--kafka');
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4_000);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`effectd did not become ready within 30 s: ${stderr}`)), 30_000);
    child.once('exit', (code, signal) => reject(new Error(`effectd exited (${code ?? signal}) before it was ready: ${stderr}`)));
    let url: string | undefined;
    let consuming = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      url ??= /listening on (http:\/\/\S+)/.exec(line)?.[1];
      consuming ||= /effectd consuming /.test(line);
      if ((wantsHttp && !url) || (wantsKafka && !consuming)) return;
      clearTimeout(timer);
      resolve({
        pid: child.pid!, child, ...(url ? { url } : {}),
        stop: (signal = 'SIGTERM') => new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill(signal);
        }),
      });
    });
  });
}
