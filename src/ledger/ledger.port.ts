import { EffectdError, isEffectdError, NOTHING_RECORDED } from '../core/errors.js';
import type { LedgerEvent } from '../core/events.js';

/** An event as the ledger holds it: its place in its stream and in the global order. */
export interface RecordedEvent {
  stream: string;
  /** 0-based position in its stream. */
  revision: number;
  /** Position in the global order (strictly increasing, gaps allowed). */
  position: number;
  event: LedgerEvent;
}

export interface AppendResult {
  /** Revision of the last appended event. */
  revision: number;
  /** Global position of the last appended event. */
  position: number;
}

/** Pass as expectedRevision when the stream must not exist yet. */
export const NO_STREAM = -1;

/**
 * The event-store port. Every adapter (SQLite, PostgreSQL, KurrentDB) passes the one contract suite
 * in test/contract/. Appends are all-or-nothing and fail with ConcurrencyError when the stream's
 * revision is not `expectedRevision`.
 */
export interface Ledger {
  readonly kind: string;
  append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult>;
  /**
   * The stream's events with revision > `afterRevision`, in order. The default (NO_STREAM) is the
   * whole stream; a reader that has folded up to revision r reads on with `afterRevision = r`.
   */
  readStream(stream: string, afterRevision?: number): Promise<RecordedEvent[]>;
  /** Events after `fromPosition` (exclusive) in global order, at most `limit` of them. */
  readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]>;
  /**
   * Group commit: the appends of many streams in ONE durable transaction. Same result as calling
   * `append` for each request in order — each all-or-nothing at its expected revision — except
   * that a failing request yields its ConcurrencyError in its slot instead of rejecting the batch.
   * Optional: adapters without it get one `append` per request (see GroupCommitLedger).
   */
  appendMany?(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]>;
  /** Many reads in one round trip, each answered as `readStream` would. Optional, like appendMany. */
  readStreams?(reads: readonly StreamRead[]): Promise<RecordedEvent[][]>;
  /**
   * The stream holding the `EffectDeclared` of `effectId`, or undefined, by an index (no scan).
   * Optional: callers test for its presence.
   */
  locateEffect?(effectId: string): Promise<string | undefined>;
  /**
   * Rejects when the ledger would not accept a write now (a full disk, a read-only file or server, a
   * file removed under the running process), with what is wrong; writes nothing to any workflow
   * stream. Optional: without it, write health is the last append's outcome (src/ledger/write-health.ts).
   */
  probeWrite?(): Promise<void>;
  close(): Promise<void>;
}

export interface StreamRead {
  stream: string;
  /** As `readStream`'s: only events after this revision (default NO_STREAM, the whole stream). */
  afterRevision?: number;
}

export interface AppendRequest {
  stream: string;
  events: readonly LedgerEvent[];
  expectedRevision: number;
}

export class ConcurrencyError extends EffectdError {
  constructor(stream: string, expectedRevision: number) {
    super('concurrency_conflict', `stream ${stream} is not at revision ${expectedRevision}; re-read and decide again`, { stream, expectedRevision });
  }
}

/** `details.ledger` of an `unavailable` error when the ledger could not be reached in time: asking it again now would wait as long. */
export const UNREACHABLE = 'unreachable';

export function isLedgerUnreachable(error: unknown): error is EffectdError {
  return isEffectdError(error, 'unavailable') && error.details['ledger'] === UNREACHABLE;
}

/** The answer to an operation that was not sent because the one just before it found the ledger unreachable. */
export function unreachableNotSent(cause: EffectdError): EffectdError {
  const retryAfterMs = typeof cause.details['retryAfterMs'] === 'number' ? cause.details['retryAfterMs'] : 1_000;
  return new EffectdError('unavailable', `the ledger is unreachable (the operation just before this one got no answer in time; this one was not sent): ${NOTHING_RECORDED}`, { retryAfterMs, ledger: UNREACHABLE }, { cause });
}
