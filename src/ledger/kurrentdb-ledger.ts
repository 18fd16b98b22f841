import { hostname } from 'node:os';
import { BACKWARDS, END, FORWARDS, KurrentDBClient, START, streamNameFilter, type ReadPosition } from '@kurrent/kurrentdb-client';
import type { LedgerEvent } from '../core/events.js';
import { ConcurrencyError, NO_STREAM, type AppendResult, type Ledger, type RecordedEvent } from './ledger.port.js';
import {
  LedgerDataError,
  assertAppendFits,
  decodeStoredRecord,
  encodeLedgerEvent,
  fromKurrentStream,
  isStreamNotFound,
  isSystemEvent,
  mapAppendError,
  mayBeInvalidPosition,
  positionOf,
  positionToNumber,
  readAllStart,
  revisionToNumber,
  singleEventPosition,
  streamPrefix,
  toKurrentStream,
  toStreamState,
  type StoredRecord,
} from './kurrentdb-mapping.js';
import { DEFAULT_MAX_APPEND_BYTES, DEFAULT_NAMESPACE, assertNamespace, parseKurrentLedgerUrl, redactConnectionString } from './kurrentdb-url.js';
import { EffectdError } from '../core/errors.js';

/** The part of the official client this adapter uses (a test can hand in a fake). */
export type KurrentClientPort = Pick<KurrentDBClient, 'appendToStream' | 'readStream' | 'readAll' | 'dispose'>;

export interface KurrentDBLedgerOptions {
  /** `kurrentdb://host:2113?tls=false`, `esdb://…`; may carry `effectdNamespace` / `effectdMaxAppendBytes`. */
  connectionString: string;
  /** Overrides `effectdNamespace` from the URL. Streams are `<namespace>-<effectd stream>`; tests use one per run. */
  namespace?: string;
  /** Overrides `effectdMaxAppendBytes`; keep it equal to the server's MaxAppendSize (default 1 MiB). */
  maxAppendBytes?: number;
  /** Written into every event's metadata. Default `<hostname>/<pid>`. */
  instanceId?: string;
  /** Check at open that the server answers and lets this user read `$all` (default true). */
  probe?: boolean;
}

/** Largest page asked of the server per `$all` read (the adapter pages on until `limit` events are found). */
const MAX_PAGE = 4_096;

/**
 * The ledger on EventStoreDB / KurrentDB: one stream per workflow, optimistic concurrency by the
 * server's expected-revision check, `$all` (filtered to effectd's namespace) for the global order.
 * What the server does differently is handled here, behind the unchanged port: stream names live
 * under a namespace prefix, types are `effectd.<Type>`, metadata says who wrote the event and in which
 * layout, positions are bigint commit positions (refused past 2^53-1), `$all` reads are inclusive
 * and need a record boundary, and an append over the server's MaxAppendSize is refused up front
 * (never split: a split append is not atomic).
 */
export class KurrentDBLedger implements Ledger {
  readonly kind = 'kurrentdb';
  private readonly prefix: string;

  constructor(
    private readonly client: KurrentClientPort,
    readonly namespace: string = DEFAULT_NAMESPACE,
    private readonly maxAppendBytes: number = DEFAULT_MAX_APPEND_BYTES,
    private readonly instanceId: string = `${hostname()}/${process.pid}`,
  ) {
    assertNamespace(namespace);
    this.prefix = streamPrefix(namespace);
  }

  static async open(options: KurrentDBLedgerOptions): Promise<KurrentDBLedger> {
    const url = parseKurrentLedgerUrl(options.connectionString);
    const client = KurrentDBClient.connectionString(url.connectionString);
    const ledger = new KurrentDBLedger(client, options.namespace ?? url.namespace, options.maxAppendBytes ?? url.maxAppendBytes, options.instanceId);
    if (options.probe ?? true) {
      try {
        await ledger.probe();
      } catch (error) {
        await client.dispose().catch(() => {});
        const unavailable = (error as { type?: unknown }).type === 'unavailable';
        const reason = unavailable ? 'no connection (is the server up and reachable, and does tls= match how it runs?)' : (error as Error).message || String(error);
        throw new EffectdError('unavailable', `KurrentDB ledger at ${redactConnectionString(url.connectionString)} is not usable: ${reason}`, {}, { cause: error });
      }
    }
    return ledger;
  }

  async append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    if (events.length === 0) throw new EffectdError('internal', 'append needs at least one event');
    const streamState = toStreamState(expectedRevision);
    const target = toKurrentStream(this.namespace, stream);
    const encoded = events.map((event) => encodeLedgerEvent(event, this.instanceId));
    assertAppendFits(stream, encoded, this.maxAppendBytes);
    let result;
    try {
      result = await this.client.appendToStream(target, encoded, { streamState });
    } catch (error) {
      throw mapAppendError(error, stream, expectedRevision, events.length);
    }
    // With throwOnAppendFailure=false in the connection string the client reports instead of throwing.
    if (!result.success) throw new ConcurrencyError(stream, expectedRevision);
    const revision = revisionToNumber(result.nextExpectedRevision);
    if (events.length === 1 && result.position) return { revision, position: singleEventPosition(result.position) };
    // For a batch the result's position is the transaction's, not necessarily the last event's: read that one back.
    return { revision, position: await this.positionOfRevision(target, revision) };
  }

  /** Port revisions are the server's stream revisions, so reading on is a read from `afterRevision + 1`. */
  async readStream(stream: string, afterRevision = NO_STREAM): Promise<RecordedEvent[]> {
    const target = toKurrentStream(this.namespace, stream);
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(target, { fromRevision: BigInt(afterRevision + 1), direction: FORWARDS, resolveLinkTos: false })) {
        const record = resolved.event as StoredRecord | undefined;
        if (!record || isSystemEvent(record)) continue;
        out.push(decodeStoredRecord(this.namespace, record));
      }
    } catch (error) {
      if (isStreamNotFound(error)) return [];
      throw error;
    }
    return out;
  }

  async readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]> {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new EffectdError('internal', `invalid readAll limit ${limit}`);
    if (limit === 0) return [];
    const { from, after } = readAllStart(fromPosition);
    if (from === START) return this.scanAll(START, after, limit);
    try {
      return await this.scanAll(from, after, limit);
    } catch (error) {
      // `fromPosition` was not the position of a log record (e.g. `position - 1`): the server refuses to
      // read from the middle of a record. Reading from the start and dropping positions ≤ fromPosition
      // gives the same answer; the positions this adapter hands out never take this path.
      if (!mayBeInvalidPosition(error)) throw error;
      return this.scanAll(START, after, limit);
    }
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }

  /**
   * Reads `$all` forwards in pages from `from` (inclusive), filtered server-side to the namespace
   * prefix, keeping events after `after` (exclusive). Each next page starts at the last event seen,
   * a known record boundary.
   */
  private async scanAll(from: ReadPosition, after: bigint, limit: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    const pageSize = Math.min(limit + 1, MAX_PAGE);
    let cursor = after;
    /** Prepare position of the event at `cursor` once the cursor is an event this scan saw. */
    let cursorPrepare: bigint | undefined;
    let start = from;
    for (;;) {
      let seen = 0;
      let last: StoredRecord | undefined;
      const page = this.client.readAll({
        fromPosition: start,
        direction: FORWARDS,
        maxCount: pageSize,
        resolveLinkTos: false,
        filter: streamNameFilter({ prefixes: [this.prefix] }),
      });
      for await (const resolved of page) {
        seen++;
        const record = resolved.event as StoredRecord | undefined;
        if (!record?.position) continue;
        last = record;
        const { commit, prepare } = record.position;
        if (commit < cursor) {
          if (cursorPrepare !== undefined) throw new LedgerDataError(`$all went backwards: position ${commit} after ${cursor}`);
          continue; // before `after`: a scan from the start is catching up
        }
        if (commit === cursor) {
          // The event a page starts at (read again, inclusive) or the one at `after` itself. Two events
          // sharing one commit position (explicit transactions, which effectd never writes) would
          // break the port's strictly increasing positions: refuse rather than drop one.
          if (cursorPrepare !== undefined && prepare !== cursorPrepare) throw new LedgerDataError(`two events share commit position ${commit} in effectd's namespace; effectd cannot address them apart`);
          continue;
        }
        cursor = commit;
        cursorPrepare = prepare;
        // The filter already did this; checked again so a server ignoring it cannot leak foreign events in.
        if (isSystemEvent(record) || fromKurrentStream(this.namespace, record.streamId) === undefined) continue;
        out.push(decodeStoredRecord(this.namespace, record));
        if (out.length >= limit) return out;
      }
      if (seen < pageSize || !last) return out;
      start = positionOf(last);
    }
  }

  private async positionOfRevision(target: string, revision: number): Promise<number> {
    for await (const resolved of this.client.readStream(target, { fromRevision: BigInt(revision), direction: FORWARDS, maxCount: 1 })) {
      const position = resolved.event?.position;
      if (position) return positionToNumber(position.commit);
    }
    throw new LedgerDataError(`appended to ${target} up to revision ${revision}, but the server returned no position for that event`);
  }

  /** One backwards read of `$all`: proves the server answers and this user may read `$all`. */
  private async probe(): Promise<void> {
    for await (const _ of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1, filter: streamNameFilter({ prefixes: [this.prefix] }) })) {
      break;
    }
  }
}
