import pg from 'pg';
import { decodeLedgerEvent, type LedgerEvent } from '../core/events.js';
import { ConcurrencyError, NO_STREAM, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent, type StreamRead } from './ledger.port.js';

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
    await pool.query(`CREATE INDEX IF NOT EXISTS events_effect_declared ON ${table} ((data->>'effectId')) WHERE type = 'EffectDeclared'`);
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

  /**
   * Group commit. Distinct streams (the usual case): ONE statement inserts every request whose
   * expected revision holds (the same EXISTS guard per request), one commit for all. A unique
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
    const streams: string[] = [], revisions: number[] = [], types: string[] = [], datas: string[] = [], expected: number[] = [];
    for (const request of requests) {
      request.events.forEach(({ type, ...data }, i) => {
        streams.push(request.stream);
        revisions.push(request.expectedRevision + 1 + i);
        types.push(type);
        datas.push(JSON.stringify(data));
        expected.push(request.expectedRevision);
      });
    }
    const result = await this.pool.query<{ stream: string; revision: number; position: string }>(
      `INSERT INTO ${this.table} (stream, revision, type, data)
       SELECT b.s, b.r, b.t, b.d::jsonb FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::int[]) WITH ORDINALITY AS b(s, r, t, d, e, n)
       WHERE b.e = ${NO_STREAM} OR EXISTS (SELECT 1 FROM ${this.table} x WHERE x.stream = b.s AND x.revision = b.e)
       ORDER BY b.n
       RETURNING stream, revision, position`,
      [streams, revisions, types, datas, expected],
    );
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

  private async appendManyOneByOne(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const results: (AppendResult | ConcurrencyError)[] = [];
      for (const { stream, events, expectedRevision } of requests) {
        await client.query('SAVEPOINT one_append');
        try {
          const result = await client.query<{ revision: number; position: string }>(
            `INSERT INTO ${this.table} (stream, revision, type, data)
             SELECT $1, r, t, d::jsonb FROM unnest($2::int[], $3::text[], $4::text[]) AS batch(r, t, d)
             WHERE $5::int = ${NO_STREAM} OR EXISTS (SELECT 1 FROM ${this.table} WHERE stream = $1 AND revision = $5::int)
             RETURNING revision, position`,
            [stream, events.map((_, i) => expectedRevision + 1 + i), events.map((e) => e.type), events.map(({ type: _type, ...data }) => JSON.stringify(data)), expectedRevision],
          );
          if (result.rowCount !== events.length) {
            await client.query('ROLLBACK TO SAVEPOINT one_append');
            results.push(new ConcurrencyError(stream, expectedRevision));
            continue;
          }
          await client.query('RELEASE SAVEPOINT one_append');
          const last = result.rows.reduce((a, b) => (a.revision > b.revision ? a : b));
          results.push({ revision: last.revision, position: Number(last.position) });
        } catch (error) {
          if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
          await client.query('ROLLBACK TO SAVEPOINT one_append');
          results.push(new ConcurrencyError(stream, expectedRevision));
        }
      }
      await client.query('COMMIT');
      return results;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** One query: a (stream, revision) index range scan per read (LATERAL), rows tagged with their read's ordinal. */
  async readStreams(reads: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    if (reads.length === 0) return [];
    const result = await this.pool.query<Row & { n: string }>(
      `SELECT r.n, e.stream, e.revision, e.position, e.type, e.data
       FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS r(stream, after, n)
       CROSS JOIN LATERAL (SELECT * FROM ${this.table} x WHERE x.stream = r.stream AND x.revision > r.after) e
       ORDER BY r.n, e.revision`,
      [reads.map((r) => r.stream), reads.map((r) => r.afterRevision ?? NO_STREAM)],
    );
    const answers: RecordedEvent[][] = reads.map(() => []);
    for (const row of result.rows) answers[Number(row.n) - 1]!.push(toRecorded(row));
    return answers;
  }

  async readStream(stream: string, afterRevision = NO_STREAM): Promise<RecordedEvent[]> {
    const result = await this.pool.query<Row>(`SELECT stream, revision, position, type, data FROM ${this.table} WHERE stream = $1 AND revision > $2 ORDER BY revision`, [stream, afterRevision]);
    return result.rows.map(toRecorded);
  }

  async locateEffect(effectId: string): Promise<string | undefined> {
    // Spelled exactly as the partial index events_effect_declared is, so the planner uses it.
    const result = await this.pool.query<{ stream: string }>(`SELECT stream FROM ${this.table} WHERE type = 'EffectDeclared' AND data->>'effectId' = $1 LIMIT 1`, [effectId]);
    return result.rows[0]?.stream;
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
