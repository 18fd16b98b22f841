import pg from 'pg';
import { hostPickingClient, parsePostgresHosts } from './postgres-hosts.js';
import type { LedgerEvent } from '../core/events.js';
import type { StoredEncoding } from './postgres-encoding.js';
import { effectIdKey, type BodyCompression } from './postgres-body.js';
import { batchRows, lastWritten, lazyRowEvents, ROW_EVENTS, rowEvents, type StoredRow } from './postgres-rows.js';
import { ConcurrencyError, NO_STREAM, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent, type StreamRead } from './ledger.port.js';
import { EffectdError } from '../core/errors.js';
import { DEFAULT_POSTGRES_TIMEOUTS, poolTimeouts, unreachableError, type PostgresTimeouts } from './postgres-timeouts.js';

export interface PostgresLedgerOptions {
  connectionString: string;
  /** Schema holding the tables (created if missing); lets test runs and tenants of one server stay apart. */
  schema?: string;
  poolSize?: number;
  /** The form new rows are written in (the composition root reads EFFECTD_LEDGER_ENCODING); both are always read. Default compact. */
  encoding?: StoredEncoding;
  /** Row bodies deflated or not (EFFECTD_LEDGER_COMPRESSION); both are always read. Default none. */
  compression?: BodyCompression;
  /** Connect and query timeouts (EFFECTD_LEDGER_CONNECT_TIMEOUT_MS, EFFECTD_LEDGER_QUERY_TIMEOUT_MS); see postgres-timeouts.ts. */
  timeouts?: PostgresTimeouts;
}

const UNIQUE_VIOLATION = '23505';
/** The advisory lock the schema's DDL runs under (any constant; effectd's own). */
const DDL_LOCK = 0x0effec7d;
/**
 * The advisory lock every append holds from before its rows take their positions until it commits
 * (pg_advisory_xact_lock: released at commit or rollback). Without it two writers' rows interleave
 * (one INSERT takes positions 1 and 3, another 2) and a reader that reads only finished
 * transactions (tx_id below the snapshot's xmin) reads 1 and 3 while 2 is still uncommitted, moves
 * past 3 and never reads 2 — the fleet showed an effect committed in the ledger and listed
 * `unknown` by another instance for good (issue 30). Holding it, positions follow commit order: a
 * position is readable only once every lower one is committed or rolled back.
 */
const APPEND_LOCK = 0x0effec7e;

/**
 * The statements, prepared once per connection (named): a lone effect then costs no parse or plan
 * on the server, and the text is sent once. An append's rows travel as ONE jsonb parameter
 * (one JSON.stringify, no array-literal escaping per row). How events map onto rows: postgres-rows.ts.
 *
 * The revision guard: a row goes in only if the stream's last event (in its newest row) is
 * exactly at the request's expected revision (-1: no row yet). A stale expectation, low or high,
 * inserts nothing (no error: the other appends of a group commit go on); only a writer racing at
 * the same revision meets the unique (stream, revision) constraint.
 *
 * The planner cannot see how many rows a parameter holds (it guesses 100 for jsonb_to_recordset,
 * and a generic plan guesses for unnest too), and with a big guess it prefers to hash the WHOLE
 * events table (a sequential scan per statement, growing with the ledger) over index probes. Both
 * batch statements are written so that only per-row index probes are possible: the guard is a
 * scalar subquery (an EXISTS could become a hashed subplan), and the LATERAL read has OFFSET 0
 * (it is not pulled up into a join, so no hash join).
 *
 * A row's events start at `revision` and end at `last_revision` (NULL: a one-event row of the
 * earlier shape), at most ROW_EVENTS of them: a read after revision r wants the rows that start
 * after r - ROW_EVENTS and end after r, and likewise for positions.
 */
function statements(table: string) {
  const columns = 'stream, revision, last_revision, position, type, data, body';
  const lastOf = (x: string) => `COALESCE(${x}.last_revision, ${x}.revision)`;
  return {
    append: `INSERT INTO ${table} (stream, revision, last_revision, type, data, body, effect_id)
      SELECT b.s, b.r, b.l, b.t, b.d, decode(b.b, 'base64'), decode(b.f, 'base64')
      FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (s text, r int, l int, e int, t text, d jsonb, b text, f text)) WITH ORDINALITY AS b(s, r, l, e, t, d, b, f, n)
      WHERE COALESCE((SELECT ${lastOf('x')} FROM ${table} x WHERE x.stream = b.s ORDER BY x.revision DESC LIMIT 1), ${NO_STREAM}) = b.e
        AND (SELECT true FROM pg_advisory_xact_lock(${APPEND_LOCK}) l)
      ORDER BY b.n
      RETURNING stream, revision, last_revision, position`,
    readStream: `SELECT ${columns} FROM ${table} x
      WHERE stream = $1 AND revision > $2 - ${ROW_EVENTS} AND ${lastOf('x')} > $2 ORDER BY revision`,
    readStreams: `SELECT r.n, e.stream, e.revision, e.last_revision, e.position, e.type, e.data, e.body
      FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS r(stream, after, n)
      CROSS JOIN LATERAL (SELECT * FROM ${table} x WHERE x.stream = r.stream AND x.revision > r.after - ${ROW_EVENTS} AND ${lastOf('x')} > r.after OFFSET 0) e
      ORDER BY r.n, e.revision`,
    // The second branch finds effects declared in one-event rows; it is spelled exactly as the partial index events_effect_declared is, so the planner uses it.
    locateEffect: `(SELECT stream FROM ${table} WHERE effect_id = $1 LIMIT 1)
      UNION ALL (SELECT stream FROM ${table} WHERE type = 'EffectDeclared' AND data->>'effectId' = $2 LIMIT 1) LIMIT 1`,
    readAll: `SELECT ${columns} FROM ${table} x
      WHERE position > $1 - ${ROW_EVENTS} AND position + (${lastOf('x')} - revision) > $1 AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY position LIMIT $2`,
  };
}
type StatementName = keyof ReturnType<typeof statements>;

/**
 * The server ledger. An append is ONE statement: it inserts the batch only if the stream's last
 * revision is exactly the expected one (the guard refuses a stale expectation, low or high; the
 * unique (stream, revision) constraint catches a writer racing at the same revision). No
 * read-then-write window exists.
 */
export class PostgresLedger implements Ledger {
  readonly kind = 'postgres';
  private readonly sql: Record<StatementName, string>;
  private constructor(private readonly pool: pg.Pool, private readonly table: string, private readonly encoding: StoredEncoding, private readonly compression: BodyCompression, private readonly timeouts: PostgresTimeouts) {
    this.sql = statements(table);
  }

  static async open(options: PostgresLedgerOptions): Promise<PostgresLedger> {
    const schema = options.schema ?? 'effectd';
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new EffectdError('invalid_config', `invalid PostgreSQL schema name "${schema}"`);
    // node-postgres reads one host; a libpq multi-host URL (a primary and its standbys) picks per connection.
    const hosts = parsePostgresHosts(options.connectionString);
    const timeouts = options.timeouts ?? DEFAULT_POSTGRES_TIMEOUTS;
    const Client = hosts ? hostPickingClient(hosts) : pg.Client;
    const connectionString = hosts?.connectionString ?? options.connectionString;
    const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 10, Client, ...poolTimeouts(timeouts) });
    pool.on('error', () => {
      /* an idle client lost its connection; the pool replaces it on next use */
    });
    const table = `${schema}.events`;
    // The schema's DDL (an upgrade may rewrite a big table) on a connection of its own without the query timeout.
    const ddl = new Client({ connectionString, connectionTimeoutMillis: timeouts.connectMs, keepAlive: true });
    ddl.on('error', () => {});
    await ddl.connect().catch((error: unknown) => {
      void pool.end().catch(() => {});
      throw unreachableError(error, 'read', timeouts);
    });
    await transaction(ddl, async (client) => {
      // Several processes opening a new schema at once (effectd start --workers N, a fleet) would race
      // in CREATE … IF NOT EXISTS (a unique violation in PostgreSQL's catalog): one at a time.
      await client.query('SELECT pg_advisory_xact_lock($1)', [DDL_LOCK]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`
      CREATE TABLE IF NOT EXISTS ${table} (
        position      BIGSERIAL PRIMARY KEY,
        stream        TEXT        NOT NULL,
        revision      INTEGER     NOT NULL,
        last_revision INTEGER,
        type          TEXT,
        data          JSONB,
        body          BYTEA,
        effect_id     BYTEA,
        tx_id         XID8        NOT NULL DEFAULT pg_current_xact_id(),
        recorded_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
        UNIQUE (stream, revision),
        CONSTRAINT ${ROW_SHAPE}
      )`);
      await upgradeToRowBodies(client, schema, table);
      await client.query(`CREATE INDEX IF NOT EXISTS events_effect_declared ON ${table} ((data->>'effectId')) WHERE type = 'EffectDeclared'`);
      await client.query(`CREATE INDEX IF NOT EXISTS events_effect ON ${table} (effect_id) WHERE effect_id IS NOT NULL`);
    }).finally(() => ddl.end().catch(() => {}));
    return new PostgresLedger(pool, table, options.encoding ?? 'compact', options.compression ?? 'none', timeouts);
  }

  /**
   * Whether a new transaction may write: not when the server is a standby or makes transactions
   * read-only (`default_transaction_read_only`, set for the database, the role or the server). Asks;
   * writes nothing. A full disk shows in the appends' own outcomes (src/ledger/write-health.ts).
   */
  async probeWrite(): Promise<void> {
    const { rows } = await this.pool.query<{ read_only: string; standby: boolean }>("SELECT current_setting('transaction_read_only') AS read_only, pg_is_in_recovery() AS standby")
      .catch((error: unknown) => { throw unreachableError(error, 'read', this.timeouts); });
    const row = rows[0];
    if (row?.standby) throw new EffectdError('unavailable', 'the PostgreSQL ledger is a standby (in recovery): it accepts no writes', { retryAfterMs: 5_000 });
    if (row?.read_only === 'on') throw new EffectdError('unavailable', 'the PostgreSQL ledger makes transactions read-only (default_transaction_read_only is on for this database, role or server): it accepts no writes', { retryAfterMs: 5_000 });
  }

  /** Runs a named statement on `on` (a pool or a client in a transaction). */
  private run<R extends pg.QueryResultRow>(on: pg.Pool | pg.ClientBase, name: StatementName, values: unknown[]): Promise<pg.QueryResult<R>> {
    return on.query<R>({ name: `effectd_${name}`, text: this.sql[name], values }).catch((error: unknown) => {
      throw unreachableError(error, name === 'append' ? 'append' : 'read', this.timeouts);
    });
  }

  async append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    if (events.length === 0) throw new EffectdError('internal', 'append needs at least one event');
    try {
      const rows = batchRows([{ stream, events, expectedRevision }], this.encoding, this.compression);
      const result = await this.run<Written>(this.pool, 'append', [JSON.stringify(rows)]);
      if (result.rowCount !== rows.length) throw new ConcurrencyError(stream, expectedRevision);
      return lastWritten(result.rows);
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new ConcurrencyError(stream, expectedRevision);
      throw error;
    }
  }

  /**
   * Group commit. Distinct streams (the usual case): ONE statement inserts every request whose
   * expected revision holds (the same revision guard per request), one commit for all. A unique
   * violation (a racing writer) or a stream named twice falls back to one transaction with a
   * savepoint per request, which gives each request exactly `append`'s answer.
   */
  async appendMany(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
    if (requests.some((r) => r.events.length === 0)) throw new EffectdError('internal', 'append needs at least one event');
    if (requests.length === 0) return [];
    if (new Set(requests.map((r) => r.stream)).size === requests.length) {
      try {
        return await this.appendManyAtOnce(requests);
      } catch (error) {
        if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      }
    }
    return this.appendManyOneByOne(requests);
  }

  private async appendManyAtOnce(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
    const rows = batchRows(requests, this.encoding, this.compression);
    const result = await this.run<Written & { stream: string }>(this.pool, 'append', [JSON.stringify(rows)]);
    const planned = countBy(rows, (row) => row.s);
    const written = new Map<string, Written[]>();
    for (const row of result.rows) {
      const mine = written.get(row.stream);
      if (mine) mine.push(row);
      else written.set(row.stream, [row]);
    }
    return requests.map((r) => {
      const mine = written.get(r.stream);
      return mine && mine.length === planned.get(r.stream) ? lastWritten(mine) : new ConcurrencyError(r.stream, r.expectedRevision);
    });
  }

  private appendManyOneByOne(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
    return this.inWriteTransaction(async (client) => {
      // Taken here, outside the savepoints: a ROLLBACK TO SAVEPOINT releases a lock taken inside it,
      // and the rows of the appends before it must keep the others waiting until this commits.
      await client.query(`SELECT pg_advisory_xact_lock(${APPEND_LOCK})`);
      const results: (AppendResult | ConcurrencyError)[] = [];
      for (const request of requests) {
        const { stream, expectedRevision } = request;
        await client.query('SAVEPOINT one_append');
        try {
          const rows = batchRows([request], this.encoding, this.compression);
          const result = await this.run<Written>(client, 'append', [JSON.stringify(rows)]);
          if (result.rowCount !== rows.length) {
            await client.query('ROLLBACK TO SAVEPOINT one_append');
            results.push(new ConcurrencyError(stream, expectedRevision));
            continue;
          }
          await client.query('RELEASE SAVEPOINT one_append');
          results.push(lastWritten(result.rows));
        } catch (error) {
          if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
          await client.query('ROLLBACK TO SAVEPOINT one_append');
          results.push(new ConcurrencyError(stream, expectedRevision));
        }
      }
      return results;
    });
  }

  /** A transaction that writes: a lost connection (its COMMIT unanswered, say) leaves its fate unknown, and says so. */
  private inWriteTransaction<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
    return inOneTransaction(this.pool, work).catch((error: unknown) => {
      throw unreachableError(error, 'append', this.timeouts);
    });
  }

  /** One query: a (stream, revision) index range scan per read (LATERAL), rows tagged with their read's ordinal. A lone read is a plain one. */
  async readStreams(reads: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    if (reads.length === 0) return [];
    if (reads.length === 1) return [await this.readStream(reads[0]!.stream, reads[0]!.afterRevision)];
    const after = reads.map((r) => r.afterRevision ?? NO_STREAM);
    const result = await this.run<StoredRow & { n: string }>(this.pool, 'readStreams', [reads.map((r) => r.stream), after]);
    const answers: RecordedEvent[][] = reads.map(() => []);
    for (const row of result.rows) {
      const i = Number(row.n) - 1;
      for (const event of rowEvents(row)) if (event.revision > after[i]!) answers[i]!.push(event);
    }
    return answers;
  }

  async readStream(stream: string, afterRevision = NO_STREAM): Promise<RecordedEvent[]> {
    const result = await this.run<StoredRow>(this.pool, 'readStream', [stream, afterRevision]);
    return result.rows.flatMap(rowEvents).filter((event) => event.revision > afterRevision);
  }

  async locateEffect(effectId: string): Promise<string | undefined> {
    const result = await this.run<{ stream: string }>(this.pool, 'locateEffect', [effectIdKey(effectId), effectId]);
    return result.rows[0]?.stream;
  }

  /**
   * Only events whose transaction is older than every transaction still running are returned, so a
   * reader never moves its checkpoint past a position that a slower transaction is about to fill.
   * Each event is decoded when first looked at (see lazyRowEvents).
   */
  async readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]> {
    const result = await this.run<StoredRow>(this.pool, 'readAll', [fromPosition, limit]);
    return result.rows.flatMap(lazyRowEvents).filter((event) => event.position > fromPosition).slice(0, limit);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** For tests: drop the schema this ledger lives in. */
  async dropSchema(): Promise<void> {
    const schema = this.table.split('.')[0];
    await this.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}

async function inOneTransaction<T>(pool: pg.Pool, work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed: unknown;
  try {
    return await transaction(client, work);
  } catch (error) {
    failed = error;
    throw error;
  } finally {
    // A connection that failed (a timeout, a reset) is not given back to the pool for the next query.
    client.release(failed instanceof Error && !(failed as { code?: unknown }).code ? failed : undefined);
  }
}

async function transaction<T>(client: pg.ClientBase, work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** What the append statement returns per row. */
interface Written { revision: number; last_revision: number | null; position: string }

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/**
 * Every row written from this version on: its last revision, and either a body or one event's data.
 * Rows of versions before it lack `last_revision`, so such a version, still running on an upgraded
 * ledger, is refused its writes (loudly) instead of putting an event inside another's row.
 */
const ROW_SHAPE = 'events_row_shape CHECK (last_revision IS NOT NULL AND (body IS NULL) <> (data IS NULL))';

/**
 * A table of the earlier shape (one event per row, `type` and `data` required) takes the row-body
 * columns and the row-shape check (NOT VALID: its old rows stay as they are and are read as
 * before). The position sequence steps by ROW_EVENTS from here on (see postgres-rows.ts). Each
 * change only when missing: an ALTER locks the table, and this runs at every start.
 */
async function upgradeToRowBodies(client: pg.ClientBase, schema: string, table: string): Promise<void> {
  const { rows } = await client.query<{ has_body: boolean; has_check: boolean; increment: string }>(
    `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'events' AND column_name = 'body') AS has_body,
       EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = $2::regclass AND conname = 'events_row_shape') AS has_check,
       (SELECT increment_by FROM pg_sequences WHERE schemaname = $1 AND sequencename = 'events_position_seq') AS increment`,
    [schema, table],
  );
  const { has_body, has_check, increment } = rows[0]!;
  if (!has_body) {
    await client.query(`ALTER TABLE ${table} ADD COLUMN last_revision INTEGER, ADD COLUMN body BYTEA, ADD COLUMN effect_id BYTEA,
      ALTER COLUMN type DROP NOT NULL, ALTER COLUMN data DROP NOT NULL`);
  }
  if (!has_check) await client.query(`ALTER TABLE ${table} ADD CONSTRAINT ${ROW_SHAPE} NOT VALID`);
  if (Number(increment) !== ROW_EVENTS) await client.query(`ALTER SEQUENCE ${table}_position_seq INCREMENT BY ${ROW_EVENTS}`);
}
