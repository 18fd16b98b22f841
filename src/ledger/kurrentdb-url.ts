import { EffectdError } from '../core/errors.js';
/**
 * The KurrentDB ledger URL and the adapter's own settings in it. Kept apart from the client so that
 * `openLedger` can recognise the URL without loading the client (and its native bridge).
 */

/** Namespace of effectd's streams on a shared server: every stream is `<namespace>-<effectd stream name>`. */
export const DEFAULT_NAMESPACE = 'effectd';
const NAMESPACE = /^[A-Za-z0-9_.]{1,64}$/;

/**
 * A namespace has no `-` (so KurrentDB's by-category projection files every effectd stream under
 * `$ce-<namespace>`), no leading `$` (system streams) and fits in 64 characters.
 */
export function assertNamespace(namespace: string): void {
  if (!NAMESPACE.test(namespace)) {
    throw new EffectdError('invalid_config', `invalid KurrentDB stream namespace "${namespace}": use 1-64 characters of A-Z a-z 0-9 _ . (no "-", no "$")`);
  }
}

/** The server's default `MaxAppendSize` (1 MiB). */
export const DEFAULT_MAX_APPEND_BYTES = 1024 * 1024;

export interface KurrentLedgerUrl {
  /** What the client gets: the URL without effectd's own parameters, `esdb` schemes renamed to `kurrentdb`. */
  connectionString: string;
  namespace: string;
  maxAppendBytes: number;
}

const SCHEME = /^(kurrentdb|kurrent|kdb|esdb)(\+discover)?:\/\//i;

/** True for the URL schemes this adapter serves (`kurrentdb://`, `esdb://`, their `+discover` forms, `kurrent://`, `kdb://`). */
export function isKurrentLedgerUrl(url: string): boolean {
  return SCHEME.test(url);
}

/**
 * Splits an EFFECTD_LEDGER URL into the client's connection string and effectd's options, given as
 * query parameters the client never sees: `effectdNamespace` (default `effectd`) and
 * `effectdMaxAppendBytes` (default 1 MiB, keep it equal to the server's MaxAppendSize).
 * `esdb://` (the old scheme, which the client accepts with a deprecation warning) becomes `kurrentdb://`.
 */
export function parseKurrentLedgerUrl(url: string): KurrentLedgerUrl {
  const scheme = SCHEME.exec(url);
  if (!scheme) throw new EffectdError('invalid_config', `"${redactConnectionString(url)}" is not a KurrentDB URL: use kurrentdb://host:2113?tls=false (or esdb://…)`);
  const base = scheme[1]!.toLowerCase() === 'esdb' ? 'kurrentdb' : scheme[1]!.toLowerCase();
  const rest = url.slice(scheme[0].length);
  const q = rest.indexOf('?');
  const hosts = q < 0 ? rest : rest.slice(0, q);
  const params = q < 0 ? [] : rest.slice(q + 1).split('&').filter((p) => p.length > 0);
  let namespace = DEFAULT_NAMESPACE;
  let maxAppendBytes = DEFAULT_MAX_APPEND_BYTES;
  const kept: string[] = [];
  for (const param of params) {
    const eq = param.indexOf('=');
    const key = (eq < 0 ? param : param.slice(0, eq)).toLowerCase();
    const value = eq < 0 ? '' : decodeURIComponent(param.slice(eq + 1));
    if (key === 'effectdnamespace') namespace = value;
    else if (key === 'effectdmaxappendbytes') {
      maxAppendBytes = Number(value);
      if (!Number.isSafeInteger(maxAppendBytes) || maxAppendBytes <= 0) throw new EffectdError('invalid_config', `invalid effectdMaxAppendBytes "${value}": a positive integer of bytes`);
    } else kept.push(param);
  }
  assertNamespace(namespace);
  const connectionString = `${base}${scheme[2]?.toLowerCase() ?? ''}://${hosts}${kept.length ? `?${kept.join('&')}` : ''}`;
  return { connectionString, namespace, maxAppendBytes };
}

/** The connection string with its password replaced, for error messages and logs. */
export function redactConnectionString(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:/@?]+):[^@/?]*@/i, '$1:***@');
}
