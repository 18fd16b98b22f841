import { join } from 'node:path';
import { isKurrentLedgerUrl } from './kurrentdb-url.js';
import type { Ledger } from './ledger.port.js';
import { PostgresLedger } from './postgres-ledger.js';
import { postgresLedgerOptions } from './postgres-url.js';
import { SqliteLedger } from './sqlite-ledger.js';
import type { StoredEncoding } from './postgres-encoding.js';
import type { BodyCompression } from './postgres-body.js';
import { EffectdError } from '../core/errors.js';

/** How new rows are stored (the composition root reads EFFECTD_LEDGER_ENCODING and EFFECTD_LEDGER_COMPRESSION); every form is always read. */
export interface LedgerStorage {
  encoding?: StoredEncoding;
  compression?: BodyCompression;
}

/**
 * Chooses the adapter from EFFECTD_LEDGER-style URLs:
 * `sqlite:` (default, `<dataDir>/ledger.db`), `sqlite:/path/file.db`, `postgres://…`,
 * `kurrentdb://host:2113?tls=false` (or `esdb://…`; the KurrentDB client is loaded only then).
 */
export async function openLedger(url: string | undefined, dataDir: string, storage: LedgerStorage = {}): Promise<Ledger> {
  const target = url ?? 'sqlite:';
  if (target.startsWith('sqlite:')) {
    const file = target.slice('sqlite:'.length) || join(dataDir, 'ledger.db');
    return new SqliteLedger(file, storage.encoding ? { encoding: storage.encoding } : {});
  }
  if (target.startsWith('postgres://') || target.startsWith('postgresql://')) return PostgresLedger.open({ ...postgresLedgerOptions(target), ...storage });
  if (isKurrentLedgerUrl(target)) {
    const { KurrentDBLedger } = await import('./kurrentdb-ledger.js');
    return KurrentDBLedger.open({ connectionString: target });
  }
  throw new EffectdError('invalid_config', `EFFECTD_LEDGER="${target}" is not a ledger URL effectd knows: use sqlite:[path], postgres://user:pass@host/db or kurrentdb://host:2113?tls=false`);
}
