import { ConcurrencyError, isLedgerUnreachable, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent, type StreamRead } from './ledger.port.js';
import type { LedgerEvent } from '../core/events.js';

/**
 * Whether the ledger accepts writes (issue 27, rule 4: `/readyz` and `/healthz` say so, and a
 * ledger that stops accepting them is logged, never silent). Two sources, the newer wins: the
 * outcome of the last append this instance made (a full disk shows here first), and a cheap probe
 * (`Ledger.probeWrite`: a one-row table in SQLite, the read-only settings of PostgreSQL), run
 * every `probeEveryMs` and when asked, never more than once per `minProbeGapMs`. A conflict with
 * another writer is no failure: the ledger took the write it was asked to check.
 */
export interface WriteHealthReport {
  writable: boolean;
  /** When that was last established (ms since the epoch); undefined: not yet. */
  checkedAt?: number;
  /** What refused the last write or probe, while not writable. */
  error?: string;
  /** While not writable: true when the ledger did not answer at all in time (a partition, a dead server), not even a read. */
  unreachable?: boolean;
  /** How it was established: an append's outcome, the probe, or nothing yet (assumed writable). */
  by: 'append' | 'probe' | 'none';
}

export interface WriteHealthOptions {
  now?: () => number;
  /** Told once when writes start failing, and once when they work again. */
  onChange?: (report: WriteHealthReport) => void;
  minProbeGapMs?: number;
}

/** A ledger that remembers whether its last write (append or probe) was accepted. */
export class WriteWatchedLedger implements Ledger {
  readonly kind: string;
  declare readonly locateEffect?: (effectId: string) => Promise<string | undefined>;
  declare readonly readStreams?: (reads: readonly StreamRead[]) => Promise<RecordedEvent[][]>;
  declare readonly appendMany?: (requests: readonly AppendRequest[]) => Promise<(AppendResult | ConcurrencyError)[]>;
  private last: WriteHealthReport = { writable: true, by: 'none' };
  private probing: Promise<WriteHealthReport> | undefined;
  private readonly now: () => number;
  private readonly minProbeGapMs: number;

  constructor(private readonly inner: Ledger, private readonly options: WriteHealthOptions = {}) {
    this.kind = inner.kind;
    this.now = options.now ?? Date.now;
    this.minProbeGapMs = options.minProbeGapMs ?? 1_000;
    const { locateEffect, readStreams, appendMany } = inner;
    if (locateEffect) this.locateEffect = (effectId) => locateEffect.call(inner, effectId);
    if (readStreams) this.readStreams = (reads) => readStreams.call(inner, reads);
    if (appendMany) this.appendMany = (requests) => this.watched(appendMany.call(inner, requests));
  }

  append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    return this.watched(this.inner.append(stream, events, expectedRevision));
  }

  readStream(stream: string, afterRevision?: number): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, afterRevision);
  }

  readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]> {
    return this.inner.readAll(fromPosition, limit);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** What is known now, without asking the ledger. */
  report(): WriteHealthReport {
    return this.last;
  }

  /** Asks the ledger (its probe) unless it was asked or written to within `minProbeGapMs`; without a probe, the last append's outcome. */
  check(): Promise<WriteHealthReport> {
    const { probeWrite } = this.inner;
    if (!probeWrite) return Promise.resolve(this.last);
    if (this.last.checkedAt !== undefined && this.now() - this.last.checkedAt < this.minProbeGapMs) return Promise.resolve(this.last);
    this.probing ??= probeWrite.call(this.inner)
      .then(() => this.record(true, 'probe'), (error: unknown) => this.record(false, 'probe', error))
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  private watched<T>(write: Promise<T>): Promise<T> {
    return write.then((result) => {
      this.record(true, 'append');
      return result;
    }, (error: unknown) => {
      if (!(error instanceof ConcurrencyError)) this.record(false, 'append', error);
      throw error;
    });
  }

  private record(writable: boolean, by: 'append' | 'probe', error?: unknown): WriteHealthReport {
    const changed = writable !== this.last.writable;
    this.last = { writable, checkedAt: this.now(), by, ...(writable ? {} : { error: error instanceof Error ? error.message : String(error), ...(isLedgerUnreachable(error) ? { unreachable: true } : {}) }) };
    if (changed) this.options.onChange?.(this.last);
    return this.last;
  }
}

/** Probes every `everyMs` (unref'd: it keeps no process alive); stop() ends it. */
export function watchWrites(ledger: WriteWatchedLedger, everyMs: number): { stop(): void } {
  const timer = setInterval(() => void ledger.check(), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

