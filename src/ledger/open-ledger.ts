import { join } from 'node:path';
import type { Ledger } from './ledger.port.js';
import { PostgresLedger } from './postgres-ledger.js';
import { SqliteLedger } from './sqlite-ledger.js';

/**
 * Chooses the adapter from EFFECTD_LEDGER-style URLs:
 * `sqlite:` (default, `<dataDir>/ledger.db`), `sqlite:/path/file.db`, `postgres://…`, `kurrentdb://…` (another issue).
 */
export async function openLedger(url: string | undefined, dataDir: string): Promise<Ledger> {
  const target = url ?? 'sqlite:';
  if (target.startsWith('sqlite:')) {
    const file = target.slice('sqlite:'.length) || join(dataDir, 'ledger.db');
    return new SqliteLedger(file);
  }
  if (target.startsWith('postgres://') || target.startsWith('postgresql://')) return PostgresLedger.open({ connectionString: target });
  throw new Error(`EFFECTD_LEDGER="${target}" is not a ledger URL effectd knows: use sqlite:[path] or postgres://user:pass@host/db`);
}
