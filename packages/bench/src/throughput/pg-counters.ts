import { readFileSync } from 'node:fs';
import pg from 'pg';

export const BENCH_DATABASE = 'effectd_bench';

/** Cluster and database counters read before and after a lane. */
export interface PgCounters {
  walLsn: string;
  /** pg_stat_wal.wal_sync: WAL fsyncs of the cluster (durable commits, and the walwriter's flushes). */
  walSync: number;
  walRecords: number;
  /** pg_stat_database.xact_commit of the bench database (autocommit statements count one each). */
  xactCommit: number;
  /** pg_stat_statements' calls in the bench database, when that extension is there. */
  statements?: number;
}

export interface PgCounterDelta {
  walBytes: number;
  walSync: number;
  walRecords: number;
  xactCommit: number;
  statements?: number;
}

/**
 * Where the bench keeps its ledger: a database of its own (created when the role may), so that
 * per-database counters count only the bench. Answers the URL to use and a note when it fell back.
 */
export async function benchDatabaseUrl(serverUrl: string): Promise<{ url: string; note?: string }> {
  const url = new URL(serverUrl);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [BENCH_DATABASE]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${BENCH_DATABASE}`);
    url.pathname = `/${BENCH_DATABASE}`;
    return { url: url.toString() };
  } catch (error) {
    return { url: serverUrl, note: `could not use database ${BENCH_DATABASE} (${(error as Error).message}); per-database counters include whatever else uses ${url.pathname.slice(1)}` };
  } finally {
    await client.end();
  }
}

/** One connection kept for the whole run, so reading counters creates no backends mid-lane. */
export class PgProbe {
  private constructor(private readonly client: pg.Client, readonly hasStatements: boolean) {}

  static async open(url: string): Promise<PgProbe> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const ext = await client.query(`SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'`);
    let hasStatements = false;
    if (ext.rowCount) hasStatements = await client.query('SELECT 1 FROM pg_stat_statements LIMIT 1').then(() => true, () => false);
    return new PgProbe(client, hasStatements);
  }

  async scalar(sql: string): Promise<string> {
    const result = await this.client.query(sql);
    return String(result.rows[0] ? Object.values(result.rows[0])[0] : '');
  }

  async counters(): Promise<PgCounters> {
    const { rows } = await this.client.query<{ lsn: string; wal_sync: string; wal_records: string; xact_commit: string }>(
      `SELECT pg_current_wal_lsn()::text AS lsn, w.wal_sync, w.wal_records, d.xact_commit
       FROM pg_stat_wal w, pg_stat_database d WHERE d.datname = current_database()`,
    );
    const row = rows[0]!;
    const counters: PgCounters = { walLsn: row.lsn, walSync: Number(row.wal_sync), walRecords: Number(row.wal_records), xactCommit: Number(row.xact_commit) };
    if (this.hasStatements) {
      const calls = await this.client.query<{ calls: string }>('SELECT coalesce(sum(calls), 0) AS calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())');
      counters.statements = Number(calls.rows[0]!.calls);
    }
    return counters;
  }

  async delta(before: PgCounters, after: PgCounters): Promise<PgCounterDelta> {
    const wal = await this.client.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn) AS bytes', [after.walLsn, before.walLsn]);
    return {
      walBytes: Number(wal.rows[0]!.bytes), walSync: after.walSync - before.walSync, walRecords: after.walRecords - before.walRecords, xactCommit: after.xactCommit - before.xactCommit,
      ...(before.statements !== undefined && after.statements !== undefined ? { statements: after.statements - before.statements } : {}),
    };
  }

  /**
   * The PostgreSQL processes whose CPU a lane charges: the backends of the lane's effectd (by
   * application_name), the cluster's own processes (walwriter, checkpointer…) and the postmaster.
   */
  async processes(applicationName: string): Promise<number[]> {
    const { rows } = await this.client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1 OR backend_type NOT IN ('client backend', 'autovacuum worker', 'parallel worker', 'walsender')`,
      [applicationName],
    );
    const self = await this.client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pids = rows.map((r) => r.pid);
    const postmaster = parentPid(self.rows[0]!.pid);
    return postmaster === undefined ? pids : [...pids, postmaster];
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/** The parent of a process (a backend's is the postmaster), from /proc/<pid>/stat field 4. */
function parentPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}
