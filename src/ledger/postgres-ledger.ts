import pg from 'pg';
import { decodeLedgerEvent, type LedgerEvent } from '../core/events.js';
import { ConcurrencyError, NO_STREAM, type AppendResult, type Ledger, type RecordedEvent } from './ledger.port.js';

export interface PostgresLedgerOptions {
  connectionString: string;
  /** Schema holding the tables (created if missing); lets test runs and tenants of one server stay apart. */
  schema?: string;
  poolSize?: number;
}

const UNIQUE_VIOLATION = '23505';

interface Row { stream: string; revision: number; position: string; type: string; data: LedgerEvent }

/**
 * The server ledger. An append is ONE statement: it inserts the batch only if the stream is exactly
 * at the expected revision (the EXISTS guard catches a stale-high expectation, the unique
 * (stream, revision) constraint catches a racing writer). No read-then-write window exists.
 */
export class PostgresLedger implements Ledger {
  readonly kind = 'postgres';
  private constructor(private readonly pool: pg.Pool, private readonly table: string) {}

  static async open(options: PostgresLedgerOptions): Promise<PostgresLedger> {
    const schema = options.schema ?? 'effectd';
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid PostgreSQL schema name "${schema}"`);
    const pool = new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? 10 });
    pool.on('error', () => {
      /* an idle client lost its connection; the pool replaces it on next use */
    });
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    const table = `${schema}.events`;
    await pool.query(`
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
    return new PostgresLedger(pool, table);
  }

  async append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const revisions = events.map((_, i) => expectedRevision + 1 + i);
    const types = events.map((e) => e.type);
    const datas = events.map(({ type: _type, ...data }) => JSON.stringify(data));
    try {
      const result = await this.pool.query<{ revision: number; position: string }>(
        `INSERT INTO ${this.table} (stream, revision, type, data)
         SELECT $1, r, t, d::jsonb FROM unnest($2::int[], $3::text[], $4::text[]) AS batch(r, t, d)
         WHERE $5::int = ${NO_STREAM} OR EXISTS (SELECT 1 FROM ${this.table} WHERE stream = $1 AND revision = $5::int)
         RETURNING revision, position`,
        [stream, revisions, types, datas, expectedRevision],
      );
      if (result.rowCount !== events.length) throw new ConcurrencyError(stream, expectedRevision);
      const last = result.rows.reduce((a, b) => (a.revision > b.revision ? a : b));
      return { revision: last.revision, position: Number(last.position) };
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new ConcurrencyError(stream, expectedRevision);
      throw error;
    }
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    const result = await this.pool.query<Row>(`SELECT stream, revision, position, type, data FROM ${this.table} WHERE stream = $1 ORDER BY revision`, [stream]);
    return result.rows.map(toRecorded);
  }

  /**
   * Only events whose transaction is older than every transaction still running are returned, so a
   * reader never moves its checkpoint past a position that a slower transaction is about to fill.
   */
  async readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]> {
    const result = await this.pool.query<Row>(
      `SELECT stream, revision, position, type, data FROM ${this.table}
       WHERE position > $1 AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
       ORDER BY position LIMIT $2`,
      [fromPosition, limit],
    );
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

function toRecorded(row: Row): RecordedEvent {
  return { stream: row.stream, revision: row.revision, position: Number(row.position), event: decodeLedgerEvent(row.type, row.data) };
}
