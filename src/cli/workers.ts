import { refuseInspectorSignal } from './signals.js';
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { Settings } from '../config/settings-loader.js';
import type { Logger } from '../logging/logger.js';
import { serveMetricsGathering } from '../metrics/cluster-metrics.js';
import { loadCredentials } from '../runtime/credentials.js';
import { loadSecret } from '../runtime/secret.js';
import { credentialsLine } from './token.command.js';

/**
 * `effectd start --workers N`: N effectd processes on one machine (node:cluster), one shared HTTP
 * port (the primary accepts and hands connections round robin, Node's default on Linux;
 * NODE_CLUSTER_SCHED_POLICY=none lets the kernel choose), each worker a full effectd on the same
 * PostgreSQL ledger. Correctness is the ledger's: a workflow's events are appended at the revision
 * that was decided on (a conflict re-reads), effects are claimed under leases, so two workers
 * racing for one step still make one effect and one provider call.
 *
 * The primary serves nothing itself: it creates the secret and the credentials file once (before
 * forking, so the workers never race to create them), forwards SIGHUP to every worker, drains them
 * all on SIGTERM/SIGINT (exit 0 when every worker drained cleanly), replaces a worker that died
 * (with backoff), and merges the workers' metrics for a scrape that reached any one of them.
 */

/** What the workers and the primary say to each other over the cluster IPC channel. */
export const DRAIN_MESSAGE = { effectd: 'drain' } as const;
export const READY_MESSAGE = 'effectd:ready';

/** How many processes `--workers` / EFFECTD_WORKERS (Settings.workers, checked by the settings loader) asks for: `auto` is one per core. */
export function workerCount(workers: Settings['workers'], cores: () => number = availableParallelism): number {
  return workers === 'auto' ? Math.max(1, cores()) : workers;
}

/** Workers share one ledger from several processes: only a server ledger does that (SQLite's group commit and its single writer are per process). */
export function refuseLedgerForWorkers(ledgerUrl: string | undefined, workers: number): void {
  const target = ledgerUrl ?? 'sqlite:';
  if (target.startsWith('postgres://') || target.startsWith('postgresql://')) return;
  throw new Error(`--workers ${workers} needs a PostgreSQL ledger (--ledger postgres://… or EFFECTD_LEDGER): the workers share one ledger from ${workers} processes, and ${target.startsWith('sqlite:') ? 'the embedded SQLite ledger has one writer and a group commit per process' : `"${target.replace(/\/\/[^@/]*@/, '//')}" is not supported with workers`}; run one process (--workers 1) on SQLite`);
}

/** True in a process that cluster.fork() started for `effectd start --workers N`. */
export const isWorker = (): boolean => cluster.isWorker;

/** The worker's number (1…N, a replacement keeps the number of the worker it replaces): EFFECTD_WORKER, which the primary sets. */
export const workerNumber = (settings: Settings): number | undefined => (cluster.isWorker ? settings.worker ?? cluster.worker?.id : undefined);

/** In a worker: tell the primary that this worker serves (every ingress is up). */
export function reportReady(url: string | undefined): void {
  if (cluster.isWorker) process.send?.({ effectd: READY_MESSAGE, url });
}

/** In a worker: the primary's drain request starts this worker's drain (the same as a SIGTERM, but never the "second signal" that aborts one). */
export function onDrainRequest(drain: (signal: NodeJS.Signals) => void): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: unknown) => {
    if ((message as { effectd?: string } | null)?.effectd === DRAIN_MESSAGE.effectd) drain('SIGTERM');
  });
  // The primary is gone (killed): do not serve on as an orphan.
  process.on('disconnect', () => drain('SIGTERM'));
}

export interface PrimaryOptions {
  workers: number;
  dataDir: string;
  /** EFFECTD_SECRET and EFFECTD_CREDENTIALS, as the settings hold them. */
  settings: Pick<Settings, 'secret' | 'credentialsFile'>;
  logger: Logger;
  drainMs: number;
  /** First restart delay after a worker died; doubles up to maxBackoffMs, back to the first once a worker lived 30 s. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * The primary of `effectd start --workers N`. Resolves with the exit code: 0 after every worker
 * drained and exited 0; 1 when a worker failed its drain, or when a worker died before the fleet
 * ever served (a bad flag or config fails the start instead of restarting forever).
 */
export async function runPrimary(options: PrimaryOptions): Promise<number> {
  const { workers, logger, dataDir } = options;
  const backoffMs = options.backoffMs ?? 250;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  // Created once here, before any worker exists: the workers read them, none creates them.
  const secret = loadSecret(dataDir, options.settings.secret);
  const credentials = loadCredentials(dataDir, options.settings.credentialsFile);
  logger.info({ event: 'DataDir', dataDir, secretOrigin: secret.origin }, `data dir: ${dataDir}  (secret: ${secret.origin})`);
  logger.info({ event: 'Credentials', file: credentials.file, created: credentials.created }, credentialsLine({ file: credentials.file, created: credentials.created }, dataDir, options.settings.credentialsFile !== undefined));
  const env: Record<string, string> = { EFFECTD_CREDENTIALS: resolve(credentials.file) };
  const slots = new Map<number, { worker: Worker; startedAt: number; ready: boolean }>();
  let served = false;
  let draining: NodeJS.Signals | undefined;
  let failedDrains = 0;
  let delay = backoffMs;
  let startupFailure: string | undefined;
  let resolveAllReady!: () => void;
  let rejectStart!: (error: Error) => void;
  const allReady = new Promise<void>((ok, fail) => { resolveAllReady = ok; rejectStart = fail; });
  let resolveDone!: () => void;
  const done = new Promise<void>((ok) => (resolveDone = ok));
  let firstUrl: string | undefined;

  const fork = (slot: number) => {
    const worker = cluster.fork({ ...env, EFFECTD_WORKER: String(slot) });
    slots.set(slot, { worker, startedAt: Date.now(), ready: false });
    serveMetricsGathering(worker, () => [...slots.values()].filter((s) => s.ready).map((s) => s.worker));
    worker.on('message', (message: { effectd?: string; url?: string }) => {
      if (message?.effectd !== READY_MESSAGE) return;
      const entry = slots.get(slot);
      if (entry?.worker !== worker) return;
      entry.ready = true;
      firstUrl ??= message.url;
      if (served) logger.info({ event: 'WorkerReplaced', worker: slot, pid: worker.process.pid }, `effectd: worker ${slot} (pid ${worker.process.pid}) serves again`);
      else if ([...slots.values()].filter((s) => s.ready).length === workers) {
        served = true; // from now on a worker that dies is replaced
        resolveAllReady();
      }
      // A drain asked for while this worker was starting reaches it now.
      if (draining) worker.send(DRAIN_MESSAGE);
    });
    worker.on('exit', (code, signal) => {
      const entry = slots.get(slot);
      if (entry?.worker !== worker) return;
      slots.delete(slot);
      if (draining) {
        if (code !== 0) failedDrains++;
        logger[code === 0 ? 'info' : 'error']({ event: 'WorkerDrained', worker: slot, pid: worker.process.pid, code, signal }, `effectd: worker ${slot} (pid ${worker.process.pid}) exited ${code ?? signal} while draining`);
        if (slots.size === 0) resolveDone();
        return;
      }
      if (!served) {
        startupFailure = `worker ${slot} exited (${code ?? signal}) before it served`;
        rejectStart(new Error(startupFailure));
        return;
      }
      const lived = Date.now() - entry.startedAt;
      if (lived > 30_000) delay = backoffMs;
      logger.error({ event: 'WorkerDied', worker: slot, pid: worker.process.pid, code, signal, restartInMs: delay }, `effectd: worker ${slot} (pid ${worker.process.pid}) died (${code ?? signal}) after ${lived} ms; starting a new one in ${delay} ms`);
      const wait = delay;
      delay = Math.min(delay * 2, maxBackoffMs);
      setTimeout(() => { if (!draining) fork(slot); else if (slots.size === 0) resolveDone(); }, wait).unref();
    });
  };

  const drainAll = (signal: NodeJS.Signals) => {
    if (draining) {
      logger.error({ event: 'DrainAborted', signal }, `effectd: second ${signal} while draining: stopping every worker now, exiting with code 1`);
      for (const { worker } of slots.values()) worker.process.kill('SIGKILL');
      process.exit(1);
    }
    draining = signal;
    logger.info({ event: 'Draining', signal, workers: slots.size, timeoutMs: options.drainMs }, `effectd: ${signal}: draining ${slots.size} worker(s) (up to ${options.drainMs} ms; ${signal} again stops at once)`);
    for (const { worker } of slots.values()) if (worker.isConnected()) worker.send(DRAIN_MESSAGE);
    if (slots.size === 0) resolveDone();
    // Each worker has its own drain timeout; this one only catches a worker that hangs past it.
    setTimeout(() => {
      logger.error({ event: 'DrainTimedOut', workers: [...slots.keys()] }, `effectd: workers ${[...slots.keys()].join(', ')} did not exit within ${options.drainMs + 5_000} ms: killing them, exiting with code 1`);
      for (const { worker } of slots.values()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, options.drainMs + 5_000).unref();
  };
  process.on('SIGTERM', drainAll);
  process.on('SIGINT', drainAll);
  process.on('SIGUSR2', drainAll);
  refuseInspectorSignal((line) => logger.warn({ event: 'SignalIgnored', signal: 'SIGUSR1' }, line));
  process.on('SIGHUP', () => {
    logger.info({ event: 'ReloadForwarded', workers: slots.size }, `effectd: SIGHUP: every worker reloads ${credentials.file}`);
    for (const { worker } of slots.values()) worker.process.kill('SIGHUP');
  });

  logger.info({ event: 'Workers', workers, scheduling: cluster.schedulingPolicy === cluster.SCHED_RR ? 'round-robin' : 'kernel' }, `effectd: starting ${workers} workers (node:cluster, one port, ${cluster.schedulingPolicy === cluster.SCHED_RR ? 'round-robin' : 'kernel'} scheduling)`);
  for (let slot = 1; slot <= workers; slot++) fork(slot);
  try {
    // A drain asked for during the start ends it too (the workers drain as soon as they are up).
    await Promise.race([allReady, done]);
  } catch (error) {
    logger.error({ event: 'WorkersFailed', reason: startupFailure }, `effectd: ${(error as Error).message}: stopping the others`);
    draining ??= 'SIGTERM';
    for (const { worker } of slots.values()) worker.process.kill('SIGTERM');
    if (slots.size > 0) await done;
    return 1;
  }
  if (!draining) {
    const where = firstUrl ? `effectd listening on ${firstUrl}` : `effectd: ${workers} workers consuming`;
    logger.info({ event: 'Listening', url: firstUrl, workers }, `${where}  (${workers} workers share it; each a full effectd on the ledger; /metrics merges every worker's)`);
  }
  await done;
  logger.info({ event: 'Drained', workers, failedDrains }, failedDrains === 0 ? `effectd: all ${workers} workers drained; exiting` : `effectd: ${failedDrains} worker(s) failed their drain; exiting with code 1`);
  return failedDrains === 0 ? 0 : 1;
}
