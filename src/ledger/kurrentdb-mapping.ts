/**
 * What the KurrentDB (EventStoreDB) ledger adapter translates, as pure functions: stream names,
 * event types, event data and metadata, expected revisions, log positions, the append size limit,
 * the client's errors (the ledger URL is in `kurrentdb-url.ts`). No I/O here; `kurrentdb-ledger.ts` does the talking.
 */
import {
  END,
  ErrorType,
  NO_STREAM as KURRENT_NO_STREAM,
  START,
  WrongExpectedVersionError,
  jsonEvent,
  type AppendStreamState,
  type JSONEventData,
  type Position,
  type ReadPosition,
} from '@kurrent/kurrentdb-client';
import { decodeLedgerEvent, type LedgerEvent } from '../core/events.js';
import { DEFAULT_MAX_APPEND_BYTES } from './kurrentdb-url.js';
import { ConcurrencyError, NO_STREAM, type RecordedEvent } from './ledger.port.js';
import { EffectdError } from '../core/errors.js';

// ───────────────────────────── stream names ─────────────────────────────

/** The prefix every effectd stream in `namespace` starts with (the `$all` read filter). */
export function streamPrefix(namespace: string): string {
  return `${namespace}-`;
}

const ESCAPE = '^';

function mustEscape(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x5e; /* ^ */
}

/**
 * Makes any JS string a valid KurrentDB stream name suffix, reversibly. Kept verbatim: everything
 * `workflowStream()` produces (URI-encoded parts, so the name stays readable in the UI). Escaped as
 * `^xxxx` (UTF-16 code unit, lowercase hex): control characters, `^` itself, and lone surrogates
 * (which UTF-8, the server's encoding, cannot carry).
 */
export function escapeStreamName(name: string): string {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < name.length) {
      const next = name.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += name[i]! + name[i + 1]!;
        i++;
        continue;
      }
    }
    const loneSurrogate = code >= 0xd800 && code <= 0xdfff;
    out += loneSurrogate || mustEscape(code) ? ESCAPE + code.toString(16).padStart(4, '0') : name[i]!;
  }
  return out;
}

/** Inverse of escapeStreamName; throws on a suffix escapeStreamName could not have produced. */
export function unescapeStreamName(escaped: string): string {
  let out = '';
  for (let i = 0; i < escaped.length; i++) {
    if (escaped[i] !== ESCAPE) {
      out += escaped[i]!;
      continue;
    }
    const hex = escaped.slice(i + 1, i + 5);
    if (!/^[0-9a-f]{4}$/.test(hex)) throw new LedgerDataError(`"${escaped}" is not an effectd stream name (bad escape at ${i})`);
    out += String.fromCharCode(parseInt(hex, 16));
    i += 4;
  }
  if (escapeStreamName(out) !== escaped) throw new LedgerDataError(`"${escaped}" is not an effectd stream name (not in canonical form)`);
  return out;
}

/** effectd stream name (e.g. `workflow-t1-wf%201`) → KurrentDB stream name (`effectd-workflow-t1-wf%201`). */
export function toKurrentStream(namespace: string, stream: string): string {
  if (stream.length === 0) throw new EffectdError('internal', 'a ledger stream name must not be empty');
  return streamPrefix(namespace) + escapeStreamName(stream);
}

/** KurrentDB stream name → effectd stream name, or undefined for a stream outside the namespace. */
export function fromKurrentStream(namespace: string, kurrentStream: string): string | undefined {
  const prefix = streamPrefix(namespace);
  if (!kurrentStream.startsWith(prefix) || kurrentStream.length === prefix.length) return undefined;
  return unescapeStreamName(kurrentStream.slice(prefix.length));
}

// ───────────────────────────── event types, data, metadata ─────────────────────────────

/** effectd's event types are namespaced on the server: `EffectDeclared` is stored as `effectd.EffectDeclared`. */
export const EVENT_TYPE_PREFIX = 'effectd.';

export function toKurrentEventType(type: LedgerEvent['type']): string {
  return EVENT_TYPE_PREFIX + type;
}

/** The effectd type of a stored event type, or undefined when effectd did not write it. */
export function fromKurrentEventType(type: string): string | undefined {
  return type.startsWith(EVENT_TYPE_PREFIX) && type.length > EVENT_TYPE_PREFIX.length ? type.slice(EVENT_TYPE_PREFIX.length) : undefined;
}

/** Version of this adapter's storage layout (type prefix, data without `type`, this metadata). */
export const LEDGER_ENCODING = 1;

/** Event metadata effectd writes next to every event (KurrentDB's UI shows it; nothing reads it to fold). */
export interface EffectdEventMetadata {
  producer: 'effectd';
  /** Storage layout version (LEDGER_ENCODING); a reader refuses a newer one instead of misreading it. */
  encoding: number;
  /** The event's own schema version (`v`). */
  schemaVersion: number;
  /** Which effectd instance appended it (host/pid unless configured). */
  instance?: string;
}

export type EncodedEvent = JSONEventData;

/** A ledger event as the client appends it: JSON content type, namespaced type, data = the event without `type`. */
export function encodeLedgerEvent(event: LedgerEvent, instance?: string): EncodedEvent {
  const { type, ...data } = event;
  const metadata: EffectdEventMetadata = { producer: 'effectd', encoding: LEDGER_ENCODING, schemaVersion: event.v, ...(instance ? { instance } : {}) };
  return jsonEvent({ type: toKurrentEventType(type), data: data as Record<string, unknown>, metadata: metadata as unknown as Record<string, unknown> });
}

/** The fields of a client `RecordedEvent` this adapter reads (the client's type is a wide union). */
export interface StoredRecord {
  streamId: string;
  type: string;
  revision: bigint;
  isJson: boolean;
  data: unknown;
  metadata?: unknown;
  position?: Position;
}

/**
 * Thrown when the server holds something in effectd's namespace that effectd cannot read back.
 * A ledger is never read around a bad event: that would fold a different history.
 */
export class LedgerDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerDataError';
  }
}

/** True for events KurrentDB itself writes (`$`-typed: tombstones, links, settings); readers skip them. */
export function isSystemEvent(record: Pick<StoredRecord, 'type'>): boolean {
  return record.type.startsWith('$');
}

/** Stored record → the port's RecordedEvent. Throws LedgerDataError on anything effectd did not write. */
export function decodeStoredRecord(namespace: string, record: StoredRecord): RecordedEvent {
  const where = `KurrentDB event ${record.streamId}@${record.revision}`;
  const stream = fromKurrentStream(namespace, record.streamId);
  if (stream === undefined) throw new LedgerDataError(`${where} is outside effectd's namespace "${namespace}"`);
  const type = fromKurrentEventType(record.type);
  if (type === undefined) throw new LedgerDataError(`${where} has type "${record.type}", which effectd did not write (effectd writes "${EVENT_TYPE_PREFIX}<EventType>")`);
  const metadata = record.metadata as Partial<EffectdEventMetadata> | undefined;
  if (metadata && typeof metadata === 'object' && metadata.producer === 'effectd' && typeof metadata.encoding === 'number' && metadata.encoding > LEDGER_ENCODING) {
    throw new LedgerDataError(`${where} uses storage encoding ${metadata.encoding}; this effectd reads up to ${LEDGER_ENCODING}: upgrade effectd`);
  }
  if (!record.isJson || record.data === null || typeof record.data !== 'object' || Array.isArray(record.data)) {
    throw new LedgerDataError(`${where} (${record.type}) does not hold a JSON object`);
  }
  let event: LedgerEvent;
  try {
    event = decodeLedgerEvent(type, record.data);
  } catch (error) {
    throw new LedgerDataError(`${where} (${record.type}) is not a valid effectd event: ${(error as Error).message}`);
  }
  if (!record.position) {
    throw new LedgerDataError(`${where}: the server returned no log position (KurrentDB/EventStoreDB before 22.6 omits it on stream reads; effectd needs 22.6 or later)`);
  }
  return { stream, revision: revisionToNumber(record.revision), position: positionToNumber(record.position.commit), event };
}

// ───────────────────────────── revisions and positions ─────────────────────────────

/** The port's expected revision → the client's stream state: NO_STREAM → `no_stream`, n → BigInt(n). */
export function toStreamState(expectedRevision: number): AppendStreamState {
  if (expectedRevision === NO_STREAM) return KURRENT_NO_STREAM;
  if (!Number.isSafeInteger(expectedRevision) || expectedRevision < 0) {
    throw new EffectdError('internal', `invalid expected revision ${expectedRevision}: use NO_STREAM (-1) or the revision of the stream's last event`);
  }
  return BigInt(expectedRevision);
}

export function revisionToNumber(revision: bigint): number {
  if (revision < 0n || revision > BigInt(Number.MAX_SAFE_INTEGER)) throw new LedgerDataError(`stream revision ${revision} does not fit the ledger port (0 … 2^53-1)`);
  return Number(revision);
}

/**
 * A commit position (a byte offset in the server's transaction log) → the port's number. Past
 * 2^53-1 (8 PiB of log) a number would silently round, so this refuses instead.
 */
export function positionToNumber(commit: bigint): number {
  if (commit < 0n) throw new LedgerDataError(`negative KurrentDB log position ${commit}`);
  if (commit > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new LedgerDataError(`KurrentDB log position ${commit} is past Number.MAX_SAFE_INTEGER (${Number.MAX_SAFE_INTEGER}); the ledger port carries positions as numbers, so effectd cannot address this log safely`);
  }
  return Number(commit);
}

/**
 * Where a `readAll(fromPosition)` starts reading and which positions it must drop: the server reads
 * `$all` from a position *inclusively*, the port is *exclusive*. Positions ≤ 0 start at the
 * beginning of the log; any other position starts at that log record (the adapter falls back to a
 * scan from the start when the server refuses it as not being a record boundary).
 */
export function readAllStart(fromPosition: number): { from: ReadPosition; after: bigint } {
  if (!Number.isSafeInteger(fromPosition)) throw new EffectdError('internal', `invalid ledger position ${fromPosition}: positions are safe integers`);
  if (fromPosition <= 0) return { from: START, after: BigInt(fromPosition) };
  const at = BigInt(fromPosition);
  return { from: { commit: at, prepare: at }, after: at };
}

/** A read position at an event the server returned (always a record boundary). */
export function positionOf(record: Pick<StoredRecord, 'position'>): ReadPosition {
  return record.position ? { commit: record.position.commit, prepare: record.position.prepare } : END;
}

/**
 * Global position of a single appended event from the append result. For one event the server
 * reports its log position as both commit and prepare position; `min` also holds if a server reports
 * the record's end as one of them.
 */
export function singleEventPosition(position: Position): number {
  return positionToNumber(position.commit < position.prepare ? position.commit : position.prepare);
}

// ───────────────────────────── append size ─────────────────────────────

/**
 * Bytes the server counts against MaxAppendSize for these events: data + metadata (UTF-8 JSON) +
 * 2 × the event type's length per event (the server's `Event.SizeOnDisk`).
 */
export function appendSize(events: readonly EncodedEvent[]): number {
  let bytes = 0;
  for (const event of events) {
    bytes += Buffer.byteLength(JSON.stringify(event.data), 'utf8');
    if (event.metadata !== undefined) bytes += Buffer.byteLength(JSON.stringify(event.metadata), 'utf8');
    bytes += event.type.length * 2;
  }
  return bytes;
}

export class AppendTooLargeError extends Error {
  readonly code = 'append_too_large';
  constructor(
    readonly stream: string,
    readonly events: number,
    readonly bytes: number | undefined,
    readonly limit: number,
  ) {
    super(
      `append of ${events} event(s) to stream ${stream} refused: ${bytes === undefined ? 'it is' : `${bytes} bytes are`} over KurrentDB's maximum append size of ${limit} bytes ` +
        `(server option MaxAppendSize, default 1 MiB). effectd never splits a batch (a split append is not atomic): ` +
        `make the events smaller (e.g. large args), or raise MaxAppendSize on the server and effectdMaxAppendBytes in the ledger URL together`,
    );
    this.name = 'AppendTooLargeError';
  }
}

/** Refuses, before anything is sent, a batch the server would refuse. */
export function assertAppendFits(stream: string, events: readonly EncodedEvent[], limit: number): void {
  const bytes = appendSize(events);
  if (bytes > limit) throw new AppendTooLargeError(stream, events.length, bytes, limit);
}

// ───────────────────────────── client errors ─────────────────────────────

function errorType(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { type?: unknown }).type : undefined;
}

/**
 * The client's WrongExpectedVersionError (its `type` is ErrorType.WRONG_EXPECTED_VERSION,
 * 'wrong-expected-version'); the `type` check also holds for a second loaded copy of the client.
 */
export function isWrongExpectedVersion(error: unknown): boolean {
  return error instanceof WrongExpectedVersionError || errorType(error) === ErrorType.WRONG_EXPECTED_VERSION;
}

export function isStreamNotFound(error: unknown): boolean {
  return errorType(error) === ErrorType.STREAM_NOT_FOUND;
}

/** Maps what an append can fail with to the port's errors; anything else passes through unchanged. */
export function mapAppendError(error: unknown, stream: string, expectedRevision: number, events: number): unknown {
  if (isWrongExpectedVersion(error)) return new ConcurrencyError(stream, expectedRevision);
  if (errorType(error) === ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED) {
    const limit = (error as { maxAppendSize?: unknown }).maxAppendSize;
    return new AppendTooLargeError(stream, events, undefined, typeof limit === 'number' ? limit : DEFAULT_MAX_APPEND_BYTES);
  }
  return error;
}

const NOT_A_POSITION_PROBLEM: readonly unknown[] = [
  ErrorType.UNAVAILABLE,
  ErrorType.DEADLINE_EXCEEDED,
  ErrorType.TIMEOUT,
  ErrorType.CANCELLED,
  ErrorType.NOT_LEADER,
  ErrorType.ACCESS_DENIED,
];

/**
 * After a `$all` read from a position failed: may the failure be the server refusing a position
 * that is not a log record boundary (e.g. `position - 1`)? Then reading again from the start is
 * correct, only slower. Connectivity, permission and data errors are never retried that way.
 */
export function mayBeInvalidPosition(error: unknown): boolean {
  if (error instanceof LedgerDataError) return false;
  return !NOT_A_POSITION_PROBLEM.includes(errorType(error));
}
