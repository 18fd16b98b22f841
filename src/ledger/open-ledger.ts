import { join } from 'node:path';
import { isKurrentLedgerUrl } from './kurrentdb-url.js';
import type { Ledger } from './ledger.port.js';
import { postgresLedgerOptions } from './postgres-url.js';
import { SqliteLedger } from './sqlite-ledger.js';
import type { StoredEncoding } from './postgres-encoding.js';
import type { BodyCompression } from './postgres-body.js';
import type { PostgresTimeouts } from './postgres-timeouts.js';
import { EffectdError } from '../core/errors.js';
import { KURRENTDB_CLIENT, loadWithOptional, POSTGRES_DRIVER } from '../shared/optional-dependency.js';

/**
 * The adapters whose drivers are optional dependencies of effectd (pg, @kurrent/kurrentdb-client),
 * loaded only when a URL asks for them; injectable, so a test can play an installation without one.
 */
export interface LedgerModules {
  postgres(): Promise<typeof import('./postgres-ledger.js')>;
  kurrentdb(): Promise<typeof import('./kurrentdb-ledger.js')>;
}

const LEDGER_MODULES: LedgerModules = {
  postgres: () => import('./postgres-ledger.js'),
  kurrentdb: () => import('./kurrentdb-ledger.js'),
};

const missingDriver = (message: string): never => {
  throw new EffectdError('invalid_config', message);
};

/** How new rows are stored (the composition root reads EFFECTD_LEDGER_ENCODING and EFFECTD_LEDGER_COMPRESSION); every form is always read. */
export interface LedgerStorage {
  encoding?: StoredEncoding;
  compression?: BodyCompression;
  /** PostgreSQL's connect and query timeouts (EFFECTD_LEDGER_CONNECT_TIMEOUT_MS, EFFECTD_LEDGER_QUERY_TIMEOUT_MS). */
  timeouts?: PostgresTimeouts;
}

/**
 * Chooses the adapter from EFFECTD_LEDGER-style URLs:
 * `sqlite:` (default, `<dataDir>/ledger.db`), `sqlite:/path/file.db`, `postgres://…`,
 * `kurrentdb://host:2113?tls=false` (or `esdb://…`). The PostgreSQL and KurrentDB drivers are
 * loaded only then; when one is not installed, the error says how to install it.
 */
export async function openLedger(url: string | undefined, dataDir: string, storage: LedgerStorage = {}, modules: LedgerModules = LEDGER_MODULES): Promise<Ledger> {
  const target = url ?? 'sqlite:';
  if (target.startsWith('sqlite:')) {
    const file = target.slice('sqlite:'.length) || join(dataDir, 'ledger.db');
    return new SqliteLedger(file, storage.encoding ? { encoding: storage.encoding } : {});
  }
  if (target.startsWith('postgres://') || target.startsWith('postgresql://')) {
    const options = { ...postgresLedgerOptions(target), ...storage };
    const { PostgresLedger } = await loadWithOptional(POSTGRES_DRIVER, modules.postgres, missingDriver);
    return PostgresLedger.open(options);
  }
  if (isKurrentLedgerUrl(target)) {
    const { KurrentDBLedger } = await loadWithOptional(KURRENTDB_CLIENT, modules.kurrentdb, missingDriver);
    return KurrentDBLedger.open({ connectionString: target });
  }
  throw new EffectdError('invalid_config', `EFFECTD_LEDGER="${target}" is not a ledger URL effectd knows: use sqlite:[path], postgres://user:pass@host/db or kurrentdb://host:2113?tls=false`);
}
