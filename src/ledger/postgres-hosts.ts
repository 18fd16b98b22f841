import pg from 'pg';
import { EffectdError } from '../core/errors.js';

/**
 * libpq's multi-host connection strings for node-postgres, which has none of its own:
 * `postgres://user:pass@h1:5432,h2:5432/db?target_session_attrs=read-write` names a primary and
 * its standbys; every new connection goes to the first host (the one that answered last, first)
 * that takes it, and, with `target_session_attrs=read-write`, that is not in recovery and does not
 * make transactions read-only — so a pool follows a promotion as libpq does. `any` (the default)
 * takes the first host that answers. Other libpq values of the parameter are refused.
 */
export interface PostgresHosts {
  /** The connection string with only the first host, for pg's own parser (user, password, database, options). */
  connectionString: string;
  hosts: { host: string; port: number }[];
  targetSessionAttrs: 'any' | 'read-write';
}

const HOSTS = /^(postgres(?:ql)?:\/\/)([^@/]*@)?([^/?#]*)(.*)$/;

/** Undefined for a single-host URL (pg parses those itself). Throws on a target_session_attrs effectd does not implement. */
export function parsePostgresHosts(url: string): PostgresHosts | undefined {
  const match = HOSTS.exec(url);
  if (!match) return undefined;
  const [, scheme, auth = '', hostList = '', rest = ''] = match;
  const hosts = hostList.split(',').filter(Boolean).map((entry) => {
    const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    const [host, port] = bracket ? [bracket[1]!, bracket[2]] : [entry.replace(/:\d+$/, ''), /:(\d+)$/.exec(entry)?.[1]];
    return { host, port: port === undefined ? 5432 : Number(port) };
  });
  const query = new URLSearchParams(rest.includes('?') ? rest.slice(rest.indexOf('?') + 1).replace(/#.*$/, '') : '');
  const attrs = query.get('target_session_attrs') ?? 'any';
  if (attrs !== 'any' && attrs !== 'read-write') throw new EffectdError('invalid_config', `target_session_attrs=${attrs} is not supported (any or read-write)`);
  if (hosts.length <= 1 && attrs === 'any') return undefined;
  query.delete('target_session_attrs');
  const path = rest.includes('?') ? rest.slice(0, rest.indexOf('?')) : rest;
  const search = query.toString();
  const first = hosts[0] ?? { host: 'localhost', port: 5432 };
  const hostText = first.host.includes(':') ? `[${first.host}]` : first.host;
  return { connectionString: `${scheme}${auth}${hostText}:${first.port}${path}${search ? `?${search}` : ''}`, hosts, targetSessionAttrs: attrs };
}

/** How long a probe waits for one host before it tries the next (libpq's connect_timeout plays this part), unless the pool's own timeouts say less. */
const PROBE_TIMEOUT_MS = 3_000;

/** The probe's bounds: the pool's connect and query timeouts (EFFECTD_LEDGER_*_TIMEOUT_MS) when set, else PROBE_TIMEOUT_MS. */
export function probeTimeouts(config: pg.ClientConfig): { connectionTimeoutMillis: number; query_timeout: number } {
  return { connectionTimeoutMillis: config.connectionTimeoutMillis || PROBE_TIMEOUT_MS, query_timeout: config.query_timeout || PROBE_TIMEOUT_MS };
}

/**
 * A pg.Client class for pg.Pool (`Client` option) that picks its host per connection: each host in
 * turn, the last good one first, probed with a short-lived connection; the pool's client then
 * connects to the chosen one.
 */
export function hostPickingClient(target: PostgresHosts): typeof pg.Client {
  let preferred = 0;
  async function pick(config: pg.ClientConfig): Promise<{ host: string; port: number }> {
    const reasons: string[] = [];
    for (let i = 0; i < target.hosts.length; i++) {
      const index = (preferred + i) % target.hosts.length;
      const candidate = target.hosts[index]!;
      // Not `config` itself: its connectionString (the first host) would win over host and port.
      const probe = new pg.Client({ ...config, connectionString: undefined, host: candidate.host, port: candidate.port, ...probeTimeouts(config) });
      probe.on('error', () => {});
      try {
        await probe.connect();
        if (target.targetSessionAttrs === 'read-write') {
          const { rows } = await probe.query<{ standby: boolean; read_only: string }>("SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') AS read_only");
          if (rows[0]?.standby || rows[0]?.read_only === 'on') {
            reasons.push(`${candidate.host}:${candidate.port} is read-only`);
            continue;
          }
        }
        preferred = index;
        return candidate;
      } catch (error) {
        reasons.push(`${candidate.host}:${candidate.port}: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        void probe.end().catch(() => {});
      }
    }
    throw new EffectdError('unavailable', `no PostgreSQL host takes ${target.targetSessionAttrs === 'read-write' ? 'writes' : 'connections'} (${reasons.join('; ')})`, { retryAfterMs: 1_000 });
  }
  class HostPickingClient extends pg.Client {
    private readonly config: pg.ClientConfig;
    constructor(config: pg.ClientConfig) {
      super(config);
      this.config = config;
    }
    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      const params = (this as unknown as { connectionParameters: pg.ClientConfig }).connectionParameters;
      const connected = pick({ ...this.config, user: params.user, password: params.password, database: params.database, ssl: params.ssl }).then(({ host, port }) => {
        const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
        self.host = host;
        self.port = port;
        self.connectionParameters.host = host;
        self.connectionParameters.port = port;
        return super.connect();
      });
      if (!callback) return connected;
      const done = callback as (err: Error | null, c?: pg.Client) => void;
      connected.then((client) => done(null, client), (error: Error) => done(error));
    }
  }
  return HostPickingClient;
}
