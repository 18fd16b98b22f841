import {
  BACKWARDS,
  END,
  MaxAppendSizeExceededError,
  START,
  StreamNotFoundError,
  UnknownError,
  WrongExpectedVersionError,
  type AppendResult,
  type AppendStreamState,
  type EventData,
  type Filter,
  type Position,
  type ReadPosition,
  type ReadRevision,
} from '@kurrent/kurrentdb-client';
import type { KurrentClientPort } from '../../src/ledger/kurrentdb-ledger.js';

/**
 * An in-memory stand-in for a KurrentDB server behind the official client's API, built from what the
 * client and server sources say they do: throws the client's own error classes, positions are byte
 * offsets in one log (so `position - 1` is the middle of a record and is refused like the server
 * refuses it), `$all` reads are inclusive, filters are by stream-name prefix. It is NOT a server:
 * it lets the adapter's own logic run here; the contract suite against a real server is
 * test/contract/ledger.kurrentdb.int.spec.ts.
 */
interface Row {
  streamId: string;
  id: string;
  type: string;
  isJson: boolean;
  revision: bigint;
  created: Date;
  data: unknown;
  metadata: unknown;
  position: Position;
}

/** What a JSON value looks like after the client stringified it and the server handed it back. */
const jsonCopy = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

export class FakeKurrentServer {
  readonly log: Row[] = [];
  private readonly streams = new Map<string, Row[]>();
  private readonly boundaries = new Set<bigint>([0n]);
  /** Next free byte offset; starts past a pretend epoch record. */
  private end = 4_096n;
  /** When true, `$all` reads ignore the filter (to show the adapter filters again itself). */
  ignoreFilter = false;
  /** The server's MaxAppendSize. */
  maxAppendSize = 1024 * 1024;
  /** Every `$all` read's start, for assertions on which path the adapter took. */
  readonly readAllFrom: ReadPosition[] = [];
  /** Every stream read's start revision, likewise. */
  readonly readStreamFrom: (ReadRevision | undefined)[] = [];
  /** Makes the next `$all` read fail with this error. */
  failNextReadAll: Error | undefined;
  appendCalls = 0;

  /** Writes a record the way another writer (or the server itself) would. */
  write(streamId: string, type: string, data: unknown, options: { isJson?: boolean; metadata?: unknown } = {}): Row {
    const stream = this.streams.get(streamId) ?? [];
    const position = this.end;
    const row: Row = {
      streamId, id: crypto.randomUUID(), type, isJson: options.isJson ?? true, revision: BigInt(stream.length), created: new Date(),
      data: jsonCopy(data), metadata: options.metadata === undefined ? undefined : jsonCopy(options.metadata), position: { commit: position, prepare: position },
    };
    this.end += BigInt(120 + JSON.stringify(data ?? null).length);
    this.boundaries.add(position);
    stream.push(row);
    this.streams.set(streamId, stream);
    this.log.push(row);
    return row;
  }

  /** Moves the log's end (e.g. to just below 2^53). */
  jumpTo(offset: bigint): void {
    this.end = offset;
    this.boundaries.add(offset);
  }

  client(): KurrentClientPort {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const server = this;
    const fake = {
      async appendToStream(streamName: string, events: EventData | EventData[], options: { streamState?: AppendStreamState } = {}): Promise<AppendResult> {
        server.appendCalls++;
        const batch = Array.isArray(events) ? events : [events];
        const state = options.streamState ?? 'any';
        const existing = server.streams.get(streamName);
        const current = existing && existing.length > 0 ? BigInt(existing.length - 1) : undefined;
        const ok = state === 'any' || (state === 'no_stream' && current === undefined) || (state === 'stream_exists' && current !== undefined) || (typeof state === 'bigint' && current === state);
        if (!ok) throw new WrongExpectedVersionError(undefined, { streamName, expected: state, current: current ?? 'no_stream' });
        const size = batch.reduce((n, e) => n + JSON.stringify(e.data).length + (e.metadata ? JSON.stringify(e.metadata).length : 0) + e.type.length * 2, 0);
        if (size > server.maxAppendSize) throw MaxAppendSizeExceededError.fromMaxAppendSize(server.maxAppendSize);
        const rows = batch.map((e) => server.write(streamName, e.type, e.data, { isJson: e.contentType === 'application/json', metadata: e.metadata }));
        // Worst case for the adapter: commit = the end of the last record, prepare = the first event's position.
        return { success: true, nextExpectedRevision: rows[rows.length - 1]!.revision, position: { commit: server.end, prepare: rows[0]!.position.prepare } };
      },

      readStream(streamName: string, options: { fromRevision?: ReadRevision; maxCount?: number | bigint } = {}) {
        return (async function* () {
          server.readStreamFrom.push(options.fromRevision);
          const rows = server.streams.get(streamName);
          if (!rows) throw new StreamNotFoundError(undefined, streamName);
          const from = options.fromRevision === undefined || options.fromRevision === START ? 0n : options.fromRevision === END ? BigInt(rows.length) : options.fromRevision;
          let left = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
          for (const row of rows) {
            if (row.revision < from) continue;
            if (left-- <= 0) return;
            yield { event: structuredClone(row) };
          }
        })();
      },

      readAll(options: { fromPosition?: ReadPosition; maxCount?: number | bigint; direction?: string; filter?: Filter } = {}) {
        return (async function* () {
          const from = options.fromPosition ?? START;
          server.readAllFrom.push(from);
          const failure = server.failNextReadAll;
          server.failNextReadAll = undefined;
          if (failure) throw failure;
          const prefixes = !server.ignoreFilter && options.filter && 'prefixes' in options.filter ? options.filter.prefixes : undefined;
          const match = (row: Row) => !prefixes || prefixes.some((p) => row.streamId.startsWith(p));
          let left = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
          if (options.direction === BACKWARDS) {
            for (const row of [...server.log].reverse()) {
              if (!match(row)) continue;
              if (left-- <= 0) return;
              yield { event: structuredClone(row), commitPosition: row.position.commit };
            }
            return;
          }
          let start = 0n;
          if (from === END) start = server.end;
          else if (from !== START) {
            if (!server.boundaries.has(from.commit) && from.commit !== server.end) throw new UnknownError(undefined, `invalid position ${from.commit}`);
            start = from.commit;
          }
          for (const row of server.log) {
            if (row.position.commit < start || !match(row)) continue;
            if (left-- <= 0) return;
            yield { event: structuredClone(row), commitPosition: row.position.commit };
          }
        })();
      },

      async dispose() {},
    };
    return fake as unknown as KurrentClientPort;
  }
}
