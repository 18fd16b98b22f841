// The SQLite ledger stores events in the compact form (src/ledger/postgres-encoding.ts) and still
// reads a file written by the previous version (events stored verbatim as JSON text), both forms in
// one table: old rows read back, locateEffect finds old effects, new events append after them.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { workflowStream } from '../../src/core/streams.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { declared, finished, started } from '../support/events.js';

const dir = mkdtempSync(join(tmpdir(), 'effectd-sqlite-encoding-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite ledger written by the previous version', () => {
  it('reads the old rows, finds their effects, appends after them in compact form', async () => {
    const file = join(dir, 'old.db');
    const stream = workflowStream('t1', 'wf-1');
    const effectId = 'eff_1622bfa41f72d3c164b8cb0028be3867dbe59e7b';
    const old = [declared(effectId, 1_000), started(effectId, 1, 1_100)];
    // The previous version's DDL and insert, verbatim (git show 2d6026a:src/ledger/sqlite-ledger.ts).
    const db = new Database(file);
    db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        stream   TEXT    NOT NULL,
        revision INTEGER NOT NULL,
        type     TEXT    NOT NULL,
        data     TEXT    NOT NULL,
        recorded_at INTEGER NOT NULL,
        UNIQUE (stream, revision)
      );
      CREATE INDEX IF NOT EXISTS events_effect_declared ON events (json_extract(data, '$.effectId')) WHERE type = 'EffectDeclared'`);
    const insert = db.prepare('INSERT INTO events (stream, revision, type, data, recorded_at) VALUES (?, ?, ?, ?, ?)');
    old.forEach((event, revision) => {
      const { type, ...data } = event;
      insert.run(stream, revision, type, JSON.stringify(data), Date.now());
    });
    db.close();

    const ledger = new SqliteLedger(file);
    try {
      expect((await ledger.readStream(stream)).map((e) => e.event)).toEqual(old);
      expect(await ledger.locateEffect(effectId)).toBe(stream);
      const more = [finished(effectId, 1, 1_200, 'committed', 'ch_1'), declared('eff_00000000000000000000000000000000000000ff', 2_000)];
      await expect(ledger.append(stream, more, 0)).rejects.toThrow();
      expect((await ledger.append(stream, more, 1)).revision).toBe(3);
      expect((await ledger.readStream(stream)).map((e) => e.event)).toEqual([...old, ...more]);
      expect((await ledger.readAll(0, 10)).map((e) => e.event)).toEqual([...old, ...more]);
      expect(await ledger.locateEffect('eff_00000000000000000000000000000000000000ff')).toBe(stream);
    } finally {
      await ledger.close();
    }
    const raw = new Database(file, { readonly: true });
    const rows = raw.prepare('SELECT data FROM events ORDER BY position').all() as { data: string }[];
    raw.close();
    expect(rows.map((r) => 'v' in (JSON.parse(r.data) as object))).toEqual([true, true, false, false]);
  });
});
