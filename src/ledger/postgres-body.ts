import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { decodeStoredEvent, encodeStoredEvent } from './postgres-encoding.js';
import { EffectdError } from '../core/errors.js';

/**
 * The `body` of a PostgreSQL ledger row that holds one or more events of one append (see
 * postgres-rows.ts): the events in their compact stored form (postgres-encoding.ts), as one JSON
 * array `[[type, stored], …]`, behind one format byte: 0, the JSON as it is (the default); 1, the
 * JSON deflated with a preset dictionary (EFFECTD_LEDGER_COMPRESSION=deflate).
 *
 * Why a dictionary: an effect's events are a few hundred bytes of JSON each whose keys, event names
 * and request shapes repeat in every effect; a deflate of ~400 bytes alone finds little to refer
 * back to, but with the dictionary it does. Measured on the throughput bench's events: JSON text
 * 864 B per effect, plain deflate 583 B, deflate with this dictionary 382 B (jsonb: 1,032 B).
 *
 * A format byte names the dictionary. A dictionary is FROZEN once rows use it: changing its bytes
 * would make every row written with it unreadable. A better dictionary gets a new format byte (and
 * this module keeps reading the old ones); test/unit/postgres-rows.unit.spec.ts pins the digest of
 * every dictionary.
 */

/** Pieces every effect's events share: event names, the compact codes around them, common values. Frozen: see above. */
const DICTIONARY_1 = Buffer.from(
  [
    '"AttemptFinished",{"O":"committed","a":17', '"h":200,"m":', '"n":1,"r":"', '"O":"failed_before_effect","h":4', '"O":"terminal_failure",', '"O":"unknown",',
    '"ReconciliationChecked",{', '"EffectEscalated",{', '"EffectResolved",{', '"EffectHeld",{', '"EffectReleased",{', '"DecisionRecorded",{',
    '"SagaStarted",{', '"SagaStepCompleted",{', '"SagaFinished",{',
    '[["EffectDeclared",{"B":"agent:', '"P":"', '"T":"', '"a":17', '"c":1,"d":"', '"g":{"amount":', '"currency":"usd",', '"k":"', '"l":"0","o":"', 'payments.charge', '"p":"1"',
    '"f":"', '}],["AttemptStarted",{"E":17', '"I":"effectd-', '"K":"efd-', '"L":17',
    '"Q":{"b":["{\\"amount\\":', '\\"currency\\":\\"usd\\",\\"metadata\\":{\\"', '\\"effectd_ref\\":\\"', '"\\"}}"],"e":"json","k":"idempotency-key","m":"POST","p":"/v1/', '"a":17', '"n":1}]]',
  ].join(''),
);

/** Format 0: the JSON as it is. Others: deflated with their dictionary. */
const DICTIONARIES: Record<number, Buffer> = { 1: DICTIONARY_1 };
const PLAIN = 0;
/** The format compressed bodies are written in. */
const DEFLATED = 1;
// Node's synchronous zlib calls set up a stream per call: a window of 4 KB (it holds the dictionary
// and a whole usual body), a small memLevel and 1 KB output chunks instead of 16 KB make that set-up
// cheap (measured per call, same sizes: deflate 39 → 12 µs, inflate 8 → 5 µs).
const ZLIB = { windowBits: 12, memLevel: 4, level: 6, chunkSize: 1024 } as const;
const UNZLIB = { windowBits: ZLIB.windowBits, chunkSize: ZLIB.chunkSize } as const;

/** sha-256 of each format's dictionary, for the test that keeps them frozen. */
export function dictionaryDigests(): Record<number, string> {
  return Object.fromEntries(Object.entries(DICTIONARIES).map(([format, dictionary]) => [format, createHash('sha256').update(dictionary).digest('hex')]));
}

export interface BodyEvent {
  type: string;
  [key: string]: unknown;
}

/**
 * How row bodies are written: `deflate` (about 27% less WAL per effect, for about a tenth more
 * effectd CPU: a zlib stream per append) or `none` (the JSON as it is). Chosen when a ledger opens
 * (EFFECTD_LEDGER_COMPRESSION, in the settings); both are always read.
 */
export type BodyCompression = 'deflate' | 'none';

/** The body of a row holding these events of `stream`, in order. */
export function encodeBody(stream: string, events: readonly BodyEvent[], compression: BodyCompression): Buffer {
  const json = Buffer.from(JSON.stringify(events.map((event) => [event.type, encodeStoredEvent(stream, event, 'compact', { indexedEffectId: false })])));
  const format = compression === 'deflate' ? DEFLATED : PLAIN;
  const payload = format === PLAIN ? json : deflateRawSync(json, { ...ZLIB, dictionary: DICTIONARIES[format] });
  const body = Buffer.allocUnsafe(payload.length + 1);
  body[0] = format;
  payload.copy(body, 1);
  return body;
}

/** The events a row's body holds, as `[type, data]` pairs in the domain's names (data without `type`). */
export function decodeBody(stream: string, body: Buffer): { type: string; data: unknown }[] {
  const format = body[0]!;
  const dictionary = DICTIONARIES[format];
  if (format !== PLAIN && !dictionary) throw new EffectdError('internal', `ledger row body has format ${format}, which this effectd does not know (written by a newer version?)`);
  const json = dictionary ? inflateRawSync(body.subarray(1), { ...UNZLIB, dictionary }) : body.subarray(1);
  const pairs = JSON.parse(json.toString('utf8')) as [string, unknown][];
  return pairs.map(([type, stored]) => ({ type, data: decodeStoredEvent(stream, type, stored) }));
}

const HEX_EFFECT_ID = /^eff_[0-9a-f]{40}$/;

/**
 * The `effect_id` key of a row that declares an effect (what the `events_effect` index holds and
 * locateEffect looks for): 0x00 + the 20 bytes of an `eff_` + 40-hex id, else 0x01 + the id's UTF-8.
 */
export function effectIdKey(effectId: string): Buffer {
  if (HEX_EFFECT_ID.test(effectId)) return Buffer.concat([Buffer.of(0), Buffer.from(effectId.slice(4), 'hex')]);
  return Buffer.concat([Buffer.of(1), Buffer.from(effectId, 'utf8')]);
}
