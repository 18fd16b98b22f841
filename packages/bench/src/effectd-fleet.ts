import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { packageRoot } from '../../../src/shared/package-root.js';
import { ledgerOfConfiguration } from './lane-ledger.js';
import { CodedError } from '../../../src/shared/coded-error.js';

/** Where an agent reaches one effectd instance, and the agent credential it presents. */
export interface EffectdEndpoint {
  url: string;
  token: string | undefined;
}

const live = new Set<ChildProcess>();
// A benchmark that dies must not leave effectd processes behind.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** One `effectd start` OS process, so the benchmark can SIGKILL it and start it again on the same data. */
export class EffectdProcess {
  private child: ChildProcess | undefined;
  private current: EffectdEndpoint | undefined;
  starts = 0;

  constructor(
    readonly name: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    private readonly credentialsFile: string,
    private readonly log: WriteStream,
    /** A line that says the instance is ready (after it listens), e.g. that its Kafka consumer joined. */
    private readonly readyPattern?: RegExp,
  ) {}

  /** The OS process id of the running instance (effectd names its Kafka client `effectd-<pid>`). */
  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get endpoint(): EffectdEndpoint {
    if (!this.current) throw new CodedError('unavailable', `effectd ${this.name} is not running`);
    return this.current;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<EffectdEndpoint> {
    const entry = join(packageRoot(), 'bin', 'effectd.js');
    const child = spawn(process.execPath, [entry, 'start', '--port', '0', ...this.args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.env } });
    this.child = child;
    live.add(child);
    child.once('exit', () => live.delete(child));
    child.stderr!.on('data', (chunk: Buffer) => this.log.write(`[${this.name} stderr] ${chunk.toString()}`));
    this.starts += 1;
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`effectd ${this.name} did not start within 30 s (log: ${this.log.path})`)), 30_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`effectd ${this.name} exited with ${code} before listening (log: ${this.log.path})`));
      });
      let listening: string | undefined;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        this.log.write(`[${this.name}] ${line}\n`);
        const match = /listening on (http:\/\/\S+)/.exec(line);
        if (match) listening = match[1]!;
        if (listening !== undefined && (this.readyPattern === undefined || this.readyPattern.test(line))) {
          clearTimeout(timer);
          resolve(listening);
        }
      });
    });
    this.current = { url, token: agentToken(this.credentialsFile) };
    return this.current;
  }

  /** SIGKILL — not a polite shutdown — and wait until the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}

/** The agent token from a credentials file (effectd writes one on first start). */
function agentToken(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const { credentials } = JSON.parse(readFileSync(file, 'utf8')) as { credentials: { token: string; role: string }[] };
  return credentials.find((c) => c.role === 'agent')?.token;
}

export interface FleetOptions {
  root: string;
  /** Prefixes the instances' names in the log (a run has several lanes). */
  name?: string;
  /** A log shared with other fleets (kept open on close); default effectd.log in `root`. */
  log?: WriteStream;
  /** Config for the production-like instances (24 h key retention). */
  config: string;
  /** Config for the key-expired instance (short key retention, as its providers have). */
  shortKeysConfig: string;
  /** A shared ledger URL (postgres://…); default: the SQLite file in the primary's data dir. */
  ledgerUrl?: string;
}

/**
 * The effectd processes the benchmark needs: a primary; a secondary on the same ledger and secret
 * (the workflow moves there on rebalance), started only for those cells; and an instance whose
 * contracts say keys expire quickly, for key-expired cells. All share one secret (EFFECTD_SECRET),
 * as a production deployment would.
 */
export class EffectdFleet {
  readonly primary: EffectdProcess;
  private readonly secondaryProcess: EffectdProcess;
  private readonly shortKeysProcess: EffectdProcess;
  readonly logFile: string;
  private readonly log: WriteStream;
  private readonly ownLog: boolean;

  constructor(options: FleetOptions) {
    const secret = randomBytes(32).toString('hex');
    const dir = (name: string) => {
      const path = join(options.root, name);
      mkdirSync(path, { recursive: true });
      return path;
    };
    this.ownLog = options.log === undefined;
    this.log = options.log ?? createWriteStream(join(options.root, 'effectd.log'), { flags: 'a' });
    this.logFile = String(this.log.path);
    const named = (instance: string) => (options.name ? `${options.name}/${instance}` : instance);
    const primaryDir = dir('primary');
    const shared = options.ledgerUrl ? ledgerOfConfiguration(options.ledgerUrl, options.name ?? 'fleet') : `sqlite:${join(primaryDir, 'ledger.db')}`;
    const primaryCredentials = join(primaryDir, 'credentials.json');
    const env = { EFFECTD_SECRET: secret };
    this.primary = new EffectdProcess(named('primary'), ['--data-dir', primaryDir, '--config', options.config, '--ledger', shared], env, primaryCredentials, this.log);
    this.secondaryProcess = new EffectdProcess(named('secondary'), ['--data-dir', dir('secondary'), '--config', options.config, '--ledger', shared],
      { ...env, EFFECTD_CREDENTIALS: primaryCredentials }, primaryCredentials, this.log);
    const shortDir = dir('short-keys');
    this.shortKeysProcess = new EffectdProcess(named('short-keys'), ['--data-dir', shortDir, '--config', options.shortKeysConfig, ...(options.ledgerUrl ? ['--ledger', ledgerOfConfiguration(options.ledgerUrl, `${options.name ?? 'fleet'}_short_keys`)] : [])],
      env, join(shortDir, 'credentials.json'), this.log);
  }

  async secondary(): Promise<EffectdProcess> {
    if (!this.secondaryProcess.running) await this.secondaryProcess.start();
    return this.secondaryProcess;
  }

  async shortKeys(): Promise<EffectdProcess> {
    if (!this.shortKeysProcess.running) await this.shortKeysProcess.start();
    return this.shortKeysProcess;
  }

  async stopSecondary(): Promise<void> {
    await this.secondaryProcess.stop();
  }

  async stopShortKeys(): Promise<void> {
    await this.shortKeysProcess.stop();
  }

  /** How many effectd processes were started in all (restarts included). */
  get starts(): number {
    return this.primary.starts + this.secondaryProcess.starts + this.shortKeysProcess.starts;
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.stop(), this.secondaryProcess.stop(), this.shortKeysProcess.stop()]);
    if (this.ownLog) await new Promise<void>((resolve) => this.log.end(() => resolve()));
  }
}
