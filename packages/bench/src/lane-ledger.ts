/**
 * The ledger of one effectd configuration in a bench run. Instances that share a ledger reconcile
 * each other's effects, so they must reach the same providers under the same contracts: a fleet's
 * primary and secondary do, another lane (its own proxies and providers) or the short-keys
 * instance (other key retention) does not. A PostgreSQL URL therefore gets a schema of its own per
 * configuration (its `schema` parameter, default `effectd`, + `_` + the suffix); any other ledger
 * URL is returned as it is (SQLite ledgers are files of their own already).
 */
export function ledgerOfConfiguration(url: string, suffix: string): string {
  if (!/^postgres(ql)?:\/\//.test(url)) return url;
  const parsed = new URL(url);
  const base = parsed.searchParams.get('schema') ?? 'effectd';
  parsed.searchParams.set('schema', `${base}_${suffix.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`);
  return parsed.toString();
}
