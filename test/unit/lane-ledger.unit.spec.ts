import { describe, expect, it } from 'vitest';
import { ledgerOfConfiguration } from '../../packages/bench/src/lane-ledger.js';
import { postgresLedgerOptions } from '../../src/ledger/postgres-url.js';

describe('each bench configuration gets a ledger of its own', () => {
  it('a PostgreSQL URL gets its own schema per configuration, from the given one (or effectd)', () => {
    const base = 'postgres://u:p@127.0.0.1:5432/db?schema=run7';
    expect(postgresLedgerOptions(ledgerOfConfiguration(base, 'http-1')).schema).toBe('run7_http_1');
    expect(postgresLedgerOptions(ledgerOfConfiguration(base, 'http-1_short_keys')).schema).toBe('run7_http_1_short_keys');
    expect(postgresLedgerOptions(ledgerOfConfiguration('postgres://u:p@h/db', 'http-2')).schema).toBe('effectd_http_2');
    expect(ledgerOfConfiguration(base, 'http-1')).not.toBe(ledgerOfConfiguration(base, 'http-2'));
  });

  it('leaves other ledgers as they are (a SQLite ledger is a file of its own)', () => {
    expect(ledgerOfConfiguration('sqlite:/tmp/x/ledger.db', 'http-1')).toBe('sqlite:/tmp/x/ledger.db');
  });
});
