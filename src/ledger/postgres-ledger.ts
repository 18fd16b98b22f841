import pg from 'pg';
import { decodeLedgerEvent, type LedgerEvent } from '../core/events.js';
import { decodeStoredEvent, encodeStoredEvent, storedEncoding, type StoredEncoding } from './postgres-encoding.js';
import { ConcurrencyError, NO_STREAM, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent, type StreamRead } from './ledger.port.js';

export interface PostgresLedgerOptions {
  connectionString: string;
  /** Schema holding the tables (created if missing); lets test runs and tenants of one server stay apart. */
  schema?: string;
  poolSize?: number;
}

const UNIQUE_VIOLATION = '23505';
/** The advisory lock the schema's DDL runs under (any constant; effectd's own). */
const DDL_LOCK = 0x0effec7d;

interface Row { stream: string; revision: number; position: string; type: string; data: unknown }

/** One row to insert, as the append statement's JSON batch spells it (the event in its compact stored form, see postgres-encoding.ts; `type` has its own column). */
interface BatchRow { s: string; r: number; e: number; t: string; d: Record<string, unknown> }

/**
 * The statements, prepared once per connection (named): a lone effect then costs no parse or plan
 * on the server, and the text is sent once. An append's rows travel as ONE jsonb parameter
 * (one JSON.stringify, no array-literal escaping per event).
 *
 * The planner cannot see how many rows a parameter holds (it guesses 100 for jsonb_to_recordset,
 * and a generic plan guesses for unnest too), and with a big guess it prefers to hash the WHOLE
 * events table (a sequential scan per statement, growing with the ledger) over index probes. Both
 * batch statements are written so that only per-row index probes are possible: the revision guard
 * is a scalar subquery (an EXISTS could become a hashed subplan), and the LATERAL read has
 * OFFSET 0 (it is not pulled up into a join, so no hash join).
 */
function statements(table: string) {
  return {
    append: `INSERT INTO ${table} (stream, revision, type, data)
      SELECT b.s, b.r, b.t, b.d
      FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (s text, r int, e int, t text, d jsonb)) WITH ORDINALITY AS b(s, r, e, t, d, n)
      WHERE b.e = ${NO_STREAM} OR (SELECT 1 FROM ${table} x WHERE x.stream = b.s AND x.revision = b.e) = 1
      ORDER BY b.n
      RETURNING stream, revision, position`,
    readStream: `SELECT stream, revision, position, type, data FROM ${table} WHERE stream = $1 AND revision > $2 ORDER BY revision`,
    readStreams: `SELECT r.n, e.stream, e.revision, e.position, e.type, e.data
      FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS r(stream, after, n)
      CROSS JOIN LATERAL (SELECT * FROM ${table} x WHERE x.stream = r.stream AND x.revision > r.after OFFSET 0) e
      ORDER BY r.n, e.revision`,
    // Spelled exactly as the partial index events_effect_declared is, so the planner uses it.
    locateEffect: `SELECT stream FROM ${table} WHERE type = 'EffectDeclared' AND data->>'effectId' = $1 LIMIT 1`,
    readAll: `SELECT stream, revision, position, type, data FROM ${table}
      WHERE position > $1 AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY position LIMIT $2`,
  };
}
type StatementName = keyof ReturnType<typeof statements>;

/**
 * The server ledger. An append is ONE statement: it inserts the batch only if the stream is exactly
 * at the expected revision (the revision guard catches a stale-high expectation, the unique
 * (stream, revision) constraint catches a racing writer). No read-then-write window exists.
 */
export class PostgresLedger implements Ledger {
  readonly kind = 'postgres';
  private readonly sql: Record<StatementName, string>;
  private readonly encoding: StoredEncoding = storedEncoding();
  private constructor(private readonly pool: pg.Pool, private readonly table: string) {
    this.sql = statements(table);
  }

  static async open(options: PostgresLedgerOptions): Promise<PostgresLedger> {
    const schema = options.schema ?? 'effectd';
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid PostgreSQL schema name "${schema}"`);
    const pool = new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? 10 });
    pool.on('error', () => {
      /* an idle client lost its connection; the pool replaces it on next use */
    });
    const table = `${schema}.events`;
    await inOneTransaction(pool, async (client) => {
      // Several processes opening a new schema at once (effectd start --workers N, a fleet) would race
      // in CREATE … IF NOT EXISTS (a unique violation in PostgreSQL's catalog): one at a time.
      await client.query('SELECT pg_advisory_xact_lock($1)', [DDL_LOCK]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`
      CREATE TABLE IF NOT EXISTS ${table} (
        position    BIGSERIAL PRIMARY KEY,
        stream      TEXT        NOT NULL,
        revision    INTEGER     NOT NULL,
        type        TEXT        NOT NULL,
        data        JSONB       NOT NULL,
        tx_id       XID8        NOT NULL DEFAULT pg_current_xact_id(),
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        UNIQUE (stream, revision)
      )`);
      await client.query(`CREATE INDEX IF NOT EXISTS events_effect_declared ON ${table} ((data->>'effectId')) WHERE type = 'EffectDeclared'`);
    });
    return new PostgresLedger(pool, table);
  }

  /** Runs a named statement on `on` (a pool or a client in a transaction). */
  private run<R extends pg.QueryResultRow>(on: pg.Pool | pg.PoolClient, name: StatementName, values: unknown[]): Promise<pg.QueryResult<R>> {
    return on.query<R>({ name: `effectd_${name}`, text: this.sql[name], values });
  }

  async append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    try {
      const result = await this.run<{ revision: number; position: string }>(this.pool, 'append', [JSON.stringify(batchRows([{ stream, events, expectedRevision }], this.encoding))]);
      if (result.rowCount !== events.length) throw new ConcurrencyError(stream, expectedRevision);
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
    if (requests.some((r) => r.events.length === 0)) throw new Error('append needs at least one event');
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
    const result = await this.run<{ stream: string; revision: number; position: string }>(this.pool, 'append', [JSON.stringify(batchRows(requests, this.encoding))]);
    const last = new Map<string, { revision: number; position: number; count: number }>();
    for (const row of result.rows) {
      const seen = last.get(row.stream);
      const position = Number(row.position);
      last.set(row.stream, { revision: Math.max(seen?.revision ?? -1, row.revision), position: Math.max(seen?.position ?? 0, position), count: (seen?.count ?? 0) + 1 });
    }
    return requests.map((r) => {
      const written = last.get(r.stream);
      return written && written.count === r.events.length ? { revision: written.revision, position: written.position } : new ConcurrencyError(r.stream, r.expectedRevision);
    });
  }

  private appendManyOneByOne(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
    return inOneTransaction(this.pool, async (client) => {
      const results: (AppendResult | ConcurrencyError)[] = [];
      for (const request of requests) {
        const { stream, events, expectedRevision } = request;
        await client.query('SAVEPOINT one_append');
        try {
          const result = await this.run<{ revision: number; position: string }>(client, 'append', [JSON.stringify(batchRows([request], this.encoding))]);
          if (result.rowCount !== events.length) {
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

  /** One query: a (stream, revision) index range scan per read (LATERAL), rows tagged with their read's ordinal. A lone read is a plain one. */
  async readStreams(reads: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    if (reads.length === 0) return [];
    if (reads.length === 1) return [await this.readStream(reads[0]!.stream, reads[0]!.afterRevision)];
    const result = await this.run<Row & { n: string }>(this.pool, 'readStreams', [reads.map((r) => r.stream), reads.map((r) => r.afterRevision ?? NO_STREAM)]);
    const answers: RecordedEvent[][] = reads.map(() => []);
    for (const row of result.rows) answers[Number(row.n) - 1]!.push(toRecorded(row));
    return answers;
  }

  async readStream(stream: string, afterRevision = NO_STREAM): Promise<RecordedEvent[]> {
    const result = await this.run<Row>(this.pool, 'readStream', [stream, afterRevision]);
    return result.rows.map(toRecorded);
  }

  async locateEffect(effectId: string): Promise<string | undefined> {
    const result = await this.run<{ stream: string }>(this.pool, 'locateEffect', [effectId]);
    return result.rows[0]?.stream;
  }

  /**
   * Only events whose transaction is older than every transaction still running are returned, so a
   * reader never moves its checkpoint past a position that a slower transaction is about to fill.
   */
  async readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]> {
    const result = await this.run<Row>(this.pool, 'readAll', [fromPosition, limit]);
    return result.rows.map(toRecorded);
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

async function inOneTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The rows of these requests, in order: each request's events at the revisions after its expected one. */
function batchRows(requests: readonly AppendRequest[], encoding: StoredEncoding): BatchRow[] {
  const rows: BatchRow[] = [];
  for (const { stream, events, expectedRevision } of requests) {
    for (let i = 0; i < events.length; i++) rows.push({ s: stream, r: expectedRevision + 1 + i, e: expectedRevision, t: events[i]!.type, d: encodeStoredEvent(stream, events[i]!, encoding) });
  }
  return rows;
}

function lastWritten(rows: readonly { revision: number; position: string }[]): AppendResult {
  const last = rows.reduce((a, b) => (a.revision > b.revision ? a : b));
  return { revision: last.revision, position: Number(last.position) };
}

function toRecorded(row: Row): RecordedEvent {
  return { stream: row.stream, revision: row.revision, position: Number(row.position), event: decodeLedgerEvent(row.type, decodeStoredEvent(row.stream, row.type, row.data)) };
}
