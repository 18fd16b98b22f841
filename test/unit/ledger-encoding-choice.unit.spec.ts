import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_STREAM } from '../../src/ledger/ledger.port.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { decodeStoredEvent, encodeStoredEvent } from '../../src/ledger/postgres-encoding.js';
import { workflowStream } from '../../src/core/streams.js';
import { declared, started } from '../support/events.js';
import { loadSettings } from '../../src/config/settings-loader.js';

describe('EFFECTD_LEDGER_ENCODING: the form new rows are written in', () => {
  const stream = workflowStream('default', 'wf-1');
  const events = [declared('eff_1622bfa41f72d3c164b8cb0028be3867dbe59e7b', 1_796_125_018_423, { tenant: 'default', workflowId: 'wf-1' }), started('eff_1622bfa41f72d3c164b8cb0028be3867dbe59e7b', 1, 1_796_125_018_424)];

  it('verbatim writes each event as it is (what older effectd versions read), and it reads back the same', () => {
    for (const event of events) {
      const { type, ...rest } = event as typeof event & { type: string };
      const stored = encodeStoredEvent(stream, event as never, 'verbatim');
      expect(stored).toEqual(JSON.parse(JSON.stringify(rest)));
      expect(decodeStoredEvent(stream, type, JSON.parse(JSON.stringify(stored)))).toEqual(JSON.parse(JSON.stringify(rest)));
    }
  });

  it('compact (the default) is smaller and reads back the same', () => {
    for (const event of events) {
      const { type, ...rest } = event as typeof event & { type: string };
      const stored = encodeStoredEvent(stream, event as never);
      expect(JSON.stringify(stored).length).toBeLessThan(JSON.stringify(rest).length);
      expect(decodeStoredEvent(stream, type, JSON.parse(JSON.stringify(stored)))).toEqual(JSON.parse(JSON.stringify(rest)));
    }
  });

  it('a ledger writes its rows in the form it was opened with (the composition root reads EFFECTD_LEDGER_ENCODING; the ledger reads no environment)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'effectd-encoding-'));
    try {
      process.env.EFFECTD_LEDGER_ENCODING = 'compact';
      const ledger = new SqliteLedger(join(dir, 'ledger.db'), { encoding: loadSettings({ EFFECTD_LEDGER_ENCODING: 'verbatim' }).ledger.encoding });
      delete process.env.EFFECTD_LEDGER_ENCODING;
      await ledger.append(stream, [events[0]!], NO_STREAM);
      await ledger.close();
      const { type: _type, ...rest } = events[0] as (typeof events)[0] & { type: string };
      const db = new Database(join(dir, 'ledger.db'), { readonly: true });
      const rows = db.prepare('SELECT data FROM events').all() as { data: string }[];
      db.close();
      expect(rows.map((r) => JSON.parse(r.data))).toEqual([JSON.parse(JSON.stringify(rest))]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('any other value stops the start with what to set', () => {
    const storedEncoding = (env: Record<string, string>) => loadSettings(env).ledger.encoding;
    expect(() => storedEncoding({ EFFECTD_LEDGER_ENCODING: 'short' })).toThrow(/EFFECTD_LEDGER_ENCODING must be compact or verbatim .*, not "short"/);
    expect(storedEncoding({})).toBe('compact');
    expect(storedEncoding({ EFFECTD_LEDGER_ENCODING: 'verbatim' })).toBe('verbatim');
  });
});
