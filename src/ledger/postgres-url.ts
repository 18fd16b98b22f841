import type { PostgresLedgerOptions } from './postgres-ledger.js';

/**
 * `postgres://user:pass@host/db?schema=name`: the `schema` parameter (effectd's, not libpq's) picks
 * the schema the ledger's tables live in, so several deployments or test runs can share a database.
 */
export function postgresLedgerOptions(url: string): PostgresLedgerOptions {
  // A libpq multi-host URL (h1:5432,h2:5432) is no WHATWG URL: read `schema` from its query by hand.
  if (!URL.canParse(url)) {
    const [base = url, query = ''] = url.split('?', 2);
    const params = new URLSearchParams(query);
    const schema = params.get('schema');
    if (schema === null) return { connectionString: url };
    params.delete('schema');
    const rest = params.toString();
    return { connectionString: rest ? `${base}?${rest}` : base, schema };
  }
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  if (schema === null) return { connectionString: url };
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}
