import { decodeLedgerEvent, type LedgerEvent } from '../core/events.js';
import { decodeBody, effectIdKey, encodeBody, type BodyCompression } from './postgres-body.js';
import { decodeStoredEvent, encodeStoredEvent, type StoredEncoding } from './postgres-encoding.js';
import type { AppendRequest, AppendResult, RecordedEvent } from './ledger.port.js';
import { EffectdError } from '../core/errors.js';

/**
 * How events map onto rows of the PostgreSQL ledger's table, both ways (pure; the statements are in
 * postgres-ledger.ts).
 *
 * A row holds the events of ONE append, in its `body` (postgres-body.ts: JSON, or deflated): revisions
 * `revision`…`last_revision`, global positions `position`…`position + (last_revision - revision)`.
 * The position sequence steps by ROW_EVENTS, so the positions inside a row never meet the next
 * row's. An append of more than ROW_EVENTS events, or one that declares several effects, takes
 * several rows (a row declares at most one effect: its `effect_id` is the index key locateEffect
 * finds it by).
 *
 * Rows of the earlier shape hold ONE event each, in `type` + `data` (jsonb, compact or verbatim;
 * `last_revision` NULL in rows written before this shape). They are still read, and still written
 * with EFFECTD_LEDGER_ENCODING=verbatim (each event as it is, for SQL readers).
 *
 * Why one row per append: per effect, two rows instead of three, four entries in the two unique
 * indexes instead of six, and the stream name stored twice instead of three times.
 */
/** Part of the stored format: reads look back this many revisions and positions for a row's start, and the position sequence steps by it. Never change it. */
export const ROW_EVENTS = 64;

/** One row to insert, as the append statement's JSON batch spells it. */
export interface BatchRow {
  /** stream, first revision, last revision, the request's expected revision */
  s: string;
  r: number;
  l: number;
  e: number;
  /** A one-event row of the earlier shape: type + jsonb data. */
  t?: string;
  d?: Record<string, unknown>;
  /** A row body, base64 (postgres-body.ts); `f` the effect_id key it declares, base64. */
  b?: string;
  f?: string;
}

/** A row as the read statements return it. */
export interface StoredRow {
  stream: string;
  revision: number;
  last_revision: number | null;
  position: string;
  type: string | null;
  data: unknown;
  body: Buffer | null;
}

/** The rows of these requests, in order: each request's events at the revisions after its expected one. */
export function batchRows(requests: readonly AppendRequest[], encoding: StoredEncoding, compression: BodyCompression): BatchRow[] {
  const rows: BatchRow[] = [];
  for (const { stream, events, expectedRevision: e } of requests) {
    if (encoding === 'verbatim') {
      events.forEach((event, i) => rows.push({ s: stream, r: e + 1 + i, l: e + 1 + i, e, t: event.type, d: encodeStoredEvent(stream, event, encoding) }));
      continue;
    }
    for (const group of rowGroups(events)) {
      const first = e + 1 + group.start;
      const declared = group.events.find((event) => event.type === 'EffectDeclared');
      rows.push({
        s: stream, r: first, l: first + group.events.length - 1, e,
        b: encodeBody(stream, group.events, compression).toString('base64'),
        ...(declared ? { f: effectIdKey(declared.effectId).toString('base64') } : {}),
      });
    }
  }
  return rows;
}

/** Consecutive events of one append cut into rows: at most ROW_EVENTS each, at most one EffectDeclared each. */
function rowGroups(events: readonly LedgerEvent[]): { start: number; events: LedgerEvent[] }[] {
  const groups: { start: number; events: LedgerEvent[] }[] = [];
  let current: { start: number; events: LedgerEvent[]; declares: boolean } | undefined;
  events.forEach((event, i) => {
    const declares = event.type === 'EffectDeclared';
    if (!current || current.events.length === ROW_EVENTS || (declares && current.declares)) {
      current = { start: i, events: [], declares: false };
      groups.push(current);
    }
    current.events.push(event);
    current.declares ||= declares;
  });
  return groups;
}

/** The events a row holds, with their revisions and positions. */
export function rowEvents(row: StoredRow): RecordedEvent[] {
  return eventsOf(row, false);
}

/**
 * The same, each event decoded when first looked at (a row's body once for all of them): a reader
 * that skips what it already knows by stream and revision (the open-effects projection) does not
 * pay for decoding it. A damaged row then throws where it is looked at.
 */
export function lazyRowEvents(row: StoredRow): RecordedEvent[] {
  return eventsOf(row, true);
}

function eventsOf(row: StoredRow, lazy: boolean): RecordedEvent[] {
  const position = Number(row.position);
  const first = row.revision;
  const count = (row.last_revision ?? row.revision) - first + 1;
  let decoded: { type: string; data: unknown }[] | undefined;
  const pairs = () => (decoded ??= rowPairs(row, count));
  const recorded: RecordedEvent[] = [];
  for (let i = 0; i < count; i++) {
    const decode = () => {
      const { type, data } = pairs()[i]!;
      return decodeLedgerEvent(type, data);
    };
    recorded.push(lazy ? lazyRecorded(row.stream, first + i, position + i, decode) : { stream: row.stream, revision: first + i, position: position + i, event: decode() });
  }
  return recorded;
}

function rowPairs(row: StoredRow, count: number): { type: string; data: unknown }[] {
  if (row.body === null) return [{ type: row.type!, data: decodeStoredEvent(row.stream, row.type!, row.data) }];
  let events: { type: string; data: unknown }[];
  try {
    events = decodeBody(row.stream, row.body);
  } catch (error) {
    throw new EffectdError('internal', `ledger row ${row.stream}@${row.revision}: its body cannot be read (${(error as Error).message}): the ledger is damaged`, {}, { cause: error });
  }
  if (events.length !== count) {
    throw new EffectdError('internal', `ledger row ${row.stream}@${row.revision} holds ${events.length} events for revisions ${row.revision}…${row.last_revision}: the ledger is damaged`);
  }
  return events;
}

function lazyRecorded(stream: string, revision: number, position: number, decode: () => LedgerEvent): RecordedEvent {
  let event: LedgerEvent | undefined;
  return {
    stream, revision, position,
    get event() {
      return (event ??= decode());
    },
  };
}

/** What an append answers, from the rows it wrote: the last event's revision and position. */
export function lastWritten(rows: readonly { revision: number; last_revision: number | null; position: string }[]): AppendResult {
  const last = rows.reduce((a, b) => (a.revision > b.revision ? a : b));
  const lastRevision = last.last_revision ?? last.revision;
  return { revision: lastRevision, position: Number(last.position) + (lastRevision - last.revision) };
}
