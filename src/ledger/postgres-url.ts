import type { PostgresLedgerOptions } from './postgres-ledger.js';

/**
 * `postgres://user:pass@host/db?schema=name`: the `schema` parameter (effectd's, not libpq's) picks
 * the schema the ledger's tables live in, so several deployments or test runs can share a database.
 */
export function postgresLedgerOptions(url: string): PostgresLedgerOptions {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  if (schema === null) return { connectionString: url };
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}
