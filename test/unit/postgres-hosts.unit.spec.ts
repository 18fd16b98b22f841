import { describe, expect, it } from 'vitest';
import { parsePostgresHosts } from '../../src/ledger/postgres-hosts.js';
import { postgresLedgerOptions } from '../../src/ledger/postgres-url.js';

describe('libpq multi-host PostgreSQL URLs', () => {
  it('reads every host and the target session attributes; pg gets the first host only', () => {
    const parsed = parsePostgresHosts('postgres://effectd:pw@10.77.0.11:5432,10.77.0.12:5433/effectd?target_session_attrs=read-write&application_name=x');
    expect(parsed).toEqual({
      connectionString: 'postgres://effectd:pw@10.77.0.11:5432/effectd?application_name=x',
      hosts: [{ host: '10.77.0.11', port: 5432 }, { host: '10.77.0.12', port: 5433 }],
      targetSessionAttrs: 'read-write',
    });
  });
  it('leaves a single-host URL to pg', () => {
    expect(parsePostgresHosts('postgres://u:p@127.0.0.1:5432/db')).toBeUndefined();
  });
  it('refuses target_session_attrs values it does not implement', () => {
    expect(() => parsePostgresHosts('postgres://u@a,b/db?target_session_attrs=standby')).toThrow(/not supported/);
  });
  it('takes effectd\'s schema parameter out of a multi-host URL', () => {
    expect(postgresLedgerOptions('postgres://u:p@a:5432,b:5432/db?target_session_attrs=read-write&schema=fleet')).toEqual({
      connectionString: 'postgres://u:p@a:5432,b:5432/db?target_session_attrs=read-write', schema: 'fleet',
    });
  });
});
