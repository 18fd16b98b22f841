import { describe, expect, it } from 'vitest';
import { workflowStream } from '../../src/core/streams.js';
import type { LedgerEvent } from '../../src/core/events.js';
import { decodeBody, dictionaryDigests, effectIdKey, encodeBody } from '../../src/ledger/postgres-body.js';
import { batchRows, lastWritten, lazyRowEvents, ROW_EVENTS, rowEvents, type StoredRow } from '../../src/ledger/postgres-rows.js';
import { declared, finished, started } from '../support/events.js';
import { loadSettings } from '../../src/config/settings-loader.js';

const stream = workflowStream('t1', 'wf-1');
const id = 'eff_1622bfa41f72d3c164b8cb0028be3867dbe59e7b';
const effect = [declared(id, 1_000), started(id, 1, 1_100, { providerKey: 'efd-mnV5CB0pB_Vb4gj14c6KSIF9Wy9s4bINYzBQtfrrYLc' })];

/** The rows as the read statements would return them (base64 → bytea, positions stepping by ROW_EVENTS). */
function stored(rows: ReturnType<typeof batchRows>, firstPosition = 64): StoredRow[] {
  return rows.map((row, i) => ({
    stream: row.s, revision: row.r, last_revision: row.l, position: String(firstPosition + i * ROW_EVENTS),
    type: row.t ?? null, data: row.d ?? null, body: row.b === undefined ? null : Buffer.from(row.b, 'base64'),
  }));
}

describe('PostgreSQL rows: one append, one row', () => {
  it('puts an append in one row and reads back the same events at consecutive revisions and positions', () => {
    for (const compression of ['none', 'deflate'] as const) {
      const rows = batchRows([{ stream, events: effect, expectedRevision: 4 }], 'compact', compression);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ s: stream, r: 5, l: 6, e: 4, f: effectIdKey(id).toString('base64') });
      expect(rowEvents(stored(rows)[0]!)).toEqual(effect.map((event, i) => ({ stream, revision: 5 + i, position: 64 + i, event })));
    }
  });

  it('cuts an append into rows of at most ROW_EVENTS events, and at each further EffectDeclared (a row declares one effect)', () => {
    const many: LedgerEvent[] = [...effect, ...Array.from({ length: 130 }, (_, i) => finished(id, i + 1, 2_000 + i, 'unknown')), declared('e-2'), declared('e-3')];
    const rows = batchRows([{ stream, events: many, expectedRevision: -1 }], 'compact', 'none');
    expect(rows.map((r) => [r.r, r.l])).toEqual([[0, 63], [64, 127], [128, 132], [133, 133]]);
    expect(rows.map((r) => r.f !== undefined)).toEqual([true, false, true, true]);
    expect(stored(rows).flatMap(rowEvents).map((e) => e.event)).toEqual(many);
    expect(stored(rows).flatMap(rowEvents).map((e) => e.revision)).toEqual(many.map((_, i) => i));
  });

  it('verbatim writes one row per event in type + data, readable by the versions before row bodies', () => {
    const rows = batchRows([{ stream, events: effect, expectedRevision: -1 }], 'verbatim', 'deflate');
    expect(rows.map((r) => [r.r, r.l, r.t, r.b])).toEqual([[0, 0, 'EffectDeclared', undefined], [1, 1, 'AttemptStarted', undefined]]);
    expect(stored(rows).flatMap(rowEvents).map((e) => e.event)).toEqual(effect);
  });

  it('reads a row of the earlier shape (one event, no last_revision)', () => {
    const [row] = stored(batchRows([{ stream, events: [effect[0]!], expectedRevision: 6 }], 'verbatim', 'none'));
    expect(rowEvents({ ...row!, last_revision: null, position: '17' })).toEqual([{ stream, revision: 7, position: 17, event: effect[0] }]);
  });

  it('refuses a row whose body does not hold its revisions (a damaged ledger is not read as a shorter stream)', () => {
    const [row] = stored(batchRows([{ stream, events: effect, expectedRevision: -1 }], 'compact', 'none'));
    expect(() => rowEvents({ ...row!, last_revision: 2 })).toThrow(/holds 2 events for revisions 0…2: the ledger is damaged/);
  });

  it('lazily: the same events, decoded only when looked at (a reader skipping known revisions pays nothing; damage shows where it is looked at)', () => {
    const [row] = stored(batchRows([{ stream, events: effect, expectedRevision: -1 }], 'compact', 'deflate'));
    expect(lazyRowEvents(row!)).toEqual(rowEvents(row!));
    const damaged = lazyRowEvents({ ...row!, body: Buffer.from([1, 0xff, 0xff]) });
    expect(damaged.map((e) => [e.revision, e.position])).toEqual([[0, 64], [1, 65]]);
    expect(() => damaged[1]!.event).toThrow(/ledger row workflow-t1\/wf-1@0: its body cannot be read .*: the ledger is damaged/);
  });

  it('answers an append with its last event: the last revision, at its own position inside the row', () => {
    expect(lastWritten([{ revision: 3, last_revision: 5, position: '640' }, { revision: 0, last_revision: 2, position: '576' }])).toEqual({ revision: 5, position: 642 });
    expect(lastWritten([{ revision: 3, last_revision: null, position: '9' }])).toEqual({ revision: 3, position: 9 });
  });
});

describe('PostgreSQL row bodies', () => {
  it('deflate writes a much smaller body than the plain JSON, and both read back the same events', () => {
    const plain = encodeBody(stream, effect, 'none');
    const deflated = encodeBody(stream, effect, 'deflate');
    expect([plain[0], deflated[0]]).toEqual([0, 1]);
    expect(deflated.length).toBeLessThan(plain.length * 0.75);
    expect(decodeBody(stream, plain)).toEqual(decodeBody(stream, deflated));
    expect(decodeBody(stream, plain).map((e) => e.type)).toEqual(['EffectDeclared', 'AttemptStarted']);
  });

  it('refuses a body format it does not know, saying so', () => {
    expect(() => decodeBody(stream, Buffer.from([9, 1, 2]))).toThrow(/format 9, which this effectd does not know/);
    const [row] = stored(batchRows([{ stream, events: effect, expectedRevision: -1 }], 'compact', 'none'));
    expect(() => rowEvents({ ...row!, body: Buffer.from([9, 1, 2]) })).toThrow(/its body cannot be read \(ledger row body has format 9/);
  });

  it('keeps every dictionary frozen: rows written with one must stay readable (a new dictionary takes a new format byte)', () => {
    expect(dictionaryDigests()).toEqual({ 1: '545d936ac34492e47113c0b1db42b3541d70b41ee15139de5e81f8ddeed321da' });
  });

  it('keys effects by the 20 bytes of an eff_ id, any other id by its text, never the same key for both', () => {
    expect(effectIdKey(id)).toEqual(Buffer.concat([Buffer.of(0), Buffer.from(id.slice(4), 'hex')]));
    expect(effectIdKey('e-1')).toEqual(Buffer.from('\u0001e-1'));
    expect(effectIdKey('eff_1622BFA41F72D3C164B8CB0028BE3867DBE59E7B')[0]).toBe(1);
  });

  it('takes EFFECTD_LEDGER_COMPRESSION deflate or none, and refuses anything else', () => {
    const bodyCompression = (env: Record<string, string>) => loadSettings(env).ledger.compression;
    expect(bodyCompression({})).toBe('none');
    expect(bodyCompression({ EFFECTD_LEDGER_COMPRESSION: 'deflate' })).toBe('deflate');
    expect(() => bodyCompression({ EFFECTD_LEDGER_COMPRESSION: 'zstd' })).toThrow(/EFFECTD_LEDGER_COMPRESSION must be deflate or none .*, not "zstd"/);
  });
});
