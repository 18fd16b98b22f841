import { workflowStream } from '../core/streams.js';

/**
 * The compact STORED form of a ledger event, used to write less WAL per event: by the PostgreSQL
 * ledger inside its row bodies (postgres-body.ts) and by the SQLite ledger in its `data` column.
 * The domain events (src/core/events.ts) keep their names; only what is stored changes, and this
 * module maps both ways at the adapter boundary:
 *
 * - the frequent keys get one-letter codes (the nested `request` object's too; `args`, the
 *   caller's own data, and `request.body` stay verbatim);
 * - `v` is left out when it is 1 (every event today), `AttemptFinished.replayed` when false;
 * - `tenant` and `workflowId` of `EffectDeclared` / `SagaStarted` are left out when the row's
 *   stream is exactly `workflowStream(tenant, workflowId)` (the row holds them already);
 * - ids that are a fixed prefix + lowercase hex (`eff_…` effect ids, intent digests, content keys)
 *   are stored as base64url of their bytes under a second code;
 * - `AttemptStarted.request.body`, which quotes the effect id (the reference stamped on the
 *   provider's object), is stored as the parts around each occurrence of it (an array, joined
 *   back with the event's effectId), and `AttemptFinished.reason` is left out when it is
 *   `HTTP <httpStatus>`.
 *
 * In a one-event row, `EffectDeclared.effectId` stays under its own name and verbatim: the
 * partial index `events_effect_declared` (and locateEffect) reads `data->>'effectId'` (SQLite:
 * `json_extract(data, '$.effectId')`).
 *
 * Old rows (written before this encoding) always have a `v` key, which the compact form never
 * writes: a row with `v` is decoded as it is, so a ledger written by the previous version keeps
 * reading, and both forms can live in one table.
 *
 * Keys this table does not know (rarer events, future fields) pass through as they are; one that
 * would read as a code, or starts with `~`, is written as `~` + key.
 */

type Json = Record<string, unknown>;

const TOP: Record<string, string> = {
  v: 'V',
  at: 'a',
  effectId: 'e',
  tenant: 't',
  workflowId: 'w',
  step: 'p',
  slot: 'l',
  tool: 'o',
  contractVersion: 'c',
  intentDigest: 'D',
  args: 'g',
  target: 'T',
  principal: 'P',
  onBehalfOf: 'B',
  repeat: 'R',
  contentKey: 'C',
  traceparent: 'X',
  attempt: 'n',
  instanceId: 'I',
  providerKey: 'K',
  leaseUntil: 'L',
  keyExpiresAt: 'E',
  request: 'Q',
  outcome: 'O',
  receipt: 'r',
  httpStatus: 'h',
  neverSent: 'N',
  replayed: 'y',
  reason: 'z',
  latencyMs: 'm',
  askedAt: 's',
};

const REQUEST: Record<string, string> = { method: 'm', path: 'p', body: 'b', encoding: 'e', keyHeader: 'k' };

/** Fields stored as base64url bytes when they are `prefix` + lowercase hex of `hexLength` digits, under their second code. */
const HEX: Record<string, { code: string; prefix: string; hexLength: number }> = {
  effectId: { code: 'f', prefix: 'eff_', hexLength: 40 },
  intentDigest: { code: 'd', prefix: '', hexLength: 64 },
  contentKey: { code: 'k', prefix: 'content-', hexLength: 32 },
};

const WORKFLOW_KEYED = new Set(['EffectDeclared', 'SagaStarted']);

function reverse(map: Record<string, string>): Map<string, string> {
  return new Map(Object.entries(map).map(([long, code]) => [code, long]));
}
const TOP_BACK = reverse(TOP);
const HEX_BACK = new Map(Object.entries(HEX).map(([long, h]) => [h.code, { long, ...h }]));
const REQUEST_BACK = reverse(REQUEST);
const TOP_CODES = new Set([...Object.values(TOP), ...Object.values(HEX).map((h) => h.code)]);
const REQUEST_CODES = new Set(Object.values(REQUEST));

function escapeKey(key: string, codes: Set<string>): string {
  return codes.has(key) || key.startsWith('~') ? `~${key}` : key;
}

function hexToB64(value: string, prefix: string, hexLength: number): string | undefined {
  if (value.length !== prefix.length + hexLength || !value.startsWith(prefix)) return undefined;
  const hex = value.slice(prefix.length);
  if (!/^[0-9a-f]*$/.test(hex)) return undefined;
  return Buffer.from(hex, 'hex').toString('base64url');
}

function b64ToHex(value: string, prefix: string): string {
  return prefix + Buffer.from(value, 'base64url').toString('hex');
}

/** The workflow a stream name spells (the inverse of workflowStream), or undefined. */
function workflowOf(stream: string): { tenant: string; workflowId: string } | undefined {
  if (!stream.startsWith('workflow-')) return undefined;
  const slash = stream.indexOf('/');
  if (slash < 0 || stream.indexOf('/', slash + 1) >= 0) return undefined;
  try {
    return { tenant: decodeURIComponent(stream.slice('workflow-'.length, slash)), workflowId: decodeURIComponent(stream.slice(slash + 1)) };
  } catch {
    return undefined;
  }
}

function sameWorkflow(stream: string, tenant: unknown, workflowId: unknown): boolean {
  if (typeof tenant !== 'string' || typeof workflowId !== 'string') return false;
  try {
    return workflowStream(tenant, workflowId) === stream;
  } catch {
    return false; // a lone surrogate: encodeURIComponent throws; keep the fields
  }
}

/** The request in codes; a body quoting the effect id becomes the parts around it (a string body is always stored as a string, so an array means parts). */
function encodeRequest(request: Json, effectId: unknown): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(request)) {
    if (key === 'body' && typeof value === 'string' && typeof effectId === 'string' && effectId.length > 0 && value.includes(effectId)) out.b = value.split(effectId);
    else out[REQUEST[key] ?? escapeKey(key, REQUEST_CODES)] = value;
  }
  return out;
}

function decodeRequest(stored: Json, effectId: unknown): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(stored)) {
    if (key === 'b' && Array.isArray(value) && typeof effectId === 'string') out.body = value.join(effectId);
    else out[key.startsWith('~') ? key.slice(1) : (REQUEST_BACK.get(key) ?? key)] = value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Which form new events are written in. `compact` (default); `verbatim`: the event as it is, one
 * event per row (PostgreSQL: jsonb an operator can query with SQL, for more WAL: a row per event). Both
 * forms are always read.
 */
export type StoredEncoding = 'compact' | 'verbatim';

/**
 * The stored form of one event of `stream` (without its `type`, which is stored beside it).
 * `indexedEffectId`: an `EffectDeclared` keeps `effectId` under its own name, verbatim, for the
 * index that reads it from a one-event row (PostgreSQL `data->>'effectId'`, SQLite `json_extract`);
 * a row body (postgres-body.ts) has its own index key and stores it compact like any other.
 */
export function encodeStoredEvent(stream: string, event: { type: string } & Json, encoding: StoredEncoding = 'compact', { indexedEffectId = true } = {}): Json {
  const { type } = event;
  if (encoding === 'verbatim') {
    const { type: _type, ...verbatim } = event;
    return verbatim;
  }
  const dropWorkflow = WORKFLOW_KEYED.has(type) && sameWorkflow(stream, event.tenant, event.workflowId);
  const out: Json = {};
  for (const [key, value] of Object.entries(event)) {
    if (key === 'type' || value === undefined) continue;
    if (key === 'v' && value === 1) continue;
    if (key === 'replayed' && value === false && type === 'AttemptFinished') continue;
    if (dropWorkflow && (key === 'tenant' || key === 'workflowId')) continue;
    if (key === 'reason' && type === 'AttemptFinished' && typeof event.httpStatus === 'number' && value === `HTTP ${event.httpStatus}`) continue;
    if (key === 'effectId' && type === 'EffectDeclared' && indexedEffectId) {
      out.effectId = value; // the partial index reads data->>'effectId'
      continue;
    }
    const hex = HEX[key];
    if (hex && typeof value === 'string') {
      const compact = hexToB64(value, hex.prefix, hex.hexLength);
      if (compact !== undefined) {
        out[hex.code] = compact;
        continue;
      }
    }
    const code = TOP[key];
    if (code === undefined) out[escapeKey(key, TOP_CODES)] = value;
    else out[code] = key === 'request' && isPlainObject(value) ? encodeRequest(value, event.effectId) : value;
  }
  return out;
}

/** The event a stored row holds, in the domain's names (without `type`). Rows of the old, verbatim form (they have `v`) come back as they are. */
export function decodeStoredEvent(stream: string, type: string, stored: unknown): unknown {
  if (!isPlainObject(stored) || 'v' in stored) return stored;
  const out: Json = {};
  for (const [key, value] of Object.entries(stored)) {
    if (key.startsWith('~')) {
      out[key.slice(1)] = value;
      continue;
    }
    const hex = HEX_BACK.get(key);
    if (hex && typeof value === 'string') {
      out[hex.long] = b64ToHex(value, hex.prefix);
      continue;
    }
    const long = TOP_BACK.get(key);
    if (long === undefined) out[key] = value;
    else out[long] = value;
  }
  if (isPlainObject(out.request)) out.request = decodeRequest(out.request, out.effectId);
  if (!('v' in out)) out.v = 1;
  if (type === 'AttemptFinished' && !('replayed' in out)) out.replayed = false;
  if (type === 'AttemptFinished' && !('reason' in out) && typeof out.httpStatus === 'number') out.reason = `HTTP ${out.httpStatus}`;
  if (WORKFLOW_KEYED.has(type) && !('tenant' in out) && !('workflowId' in out)) {
    const workflow = workflowOf(stream);
    if (workflow) Object.assign(out, workflow);
  }
  return out;
}
