import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';
import { decodeLedgerEvent, type LedgerEvent } from '../core/events.js';
import { ConcurrencyError, NO_STREAM, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent, type StreamRead } from './ledger.port.js';
import { decodeStoredEvent, encodeStoredEvent, type StoredEncoding } from './postgres-encoding.js';
import { EffectdError } from '../core/errors.js';

export interface SqliteLedgerOptions {
  /** `synchronous` pragma: FULL (default) fsyncs the WAL on every commit, so an acknowledged append survives power loss. */
  synchronous?: 'FULL' | 'NORMAL';
  /** The form new rows are written in (the composition root reads EFFECTD_LEDGER_ENCODING); both are always read. Default compact. */
  encoding?: StoredEncoding;
}

export interface Row { stream: string; revision: number; position: number; type: string; data: string }

/** The embedded default ledger: one file, WAL journal, one writer at a time. */
export class SqliteLedger implements Ledger {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  private readonly encoding: StoredEncoding;
  private readonly insert: Database.Statement;
  private readonly head: Database.Statement;
  private readonly byStream: Database.Statement;
  private readonly declaring: Database.Statement;
  private readonly fromPosition: Database.Statement;
  private readonly appendTx: (stream: string, events: readonly LedgerEvent[], expected: number) => AppendResult;
  private readonly appendManyTx: (requests: readonly AppendRequest[]) => (AppendResult | ConcurrencyError)[];

  constructor(file: string, options: SqliteLedgerOptions = {}) {
    privateDatabaseFiles(file);
    this.encoding = options.encoding ?? 'compact';
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        stream   TEXT    NOT NULL,
        revision INTEGER NOT NULL,
        type     TEXT    NOT NULL,
        data     TEXT    NOT NULL,
        recorded_at INTEGER NOT NULL,
        UNIQUE (stream, revision)
      );
      CREATE INDEX IF NOT EXISTS events_effect_declared ON events (json_extract(data, '$.effectId')) WHERE type = 'EffectDeclared'`);
    this.insert = this.db.prepare('INSERT INTO events (stream, revision, type, data, recorded_at) VALUES (?, ?, ?, ?, ?)');
    this.head = this.db.prepare('SELECT MAX(revision) AS revision FROM events WHERE stream = ?');
    this.byStream = this.db.prepare('SELECT stream, revision, position, type, data FROM events WHERE stream = ? AND revision > ? ORDER BY revision');
    // Spelled exactly as the partial index is, so the planner uses it.
    this.declaring = this.db.prepare("SELECT stream FROM events WHERE type = 'EffectDeclared' AND json_extract(data, '$.effectId') = ? LIMIT 1");
    this.fromPosition = this.db.prepare('SELECT stream, revision, position, type, data FROM events WHERE position > ? ORDER BY position LIMIT ?');
    const insertAt = (stream: string, events: readonly LedgerEvent[], expected: number): AppendResult => {
      const current = (this.head.get(stream) as { revision: number | null }).revision ?? NO_STREAM;
      if (current !== expected) throw new ConcurrencyError(stream, expected);
      let position = 0;
      let revision = expected;
      const now = Date.now();
      for (const event of events) {
        revision += 1;
        position = Number(this.insert.run(stream, revision, event.type, JSON.stringify(encodeStoredEvent(stream, event, this.encoding)), now).lastInsertRowid);
      }
      return { revision, position };
    };
    // IMMEDIATE takes the write lock first, so the revision check and the insert are one atomic step
    // even across processes sharing the file; UNIQUE(stream, revision) backs it up.
    this.appendTx = this.db.transaction(insertAt).immediate;
    // One transaction (one fsync) for many appends; a savepoint per request keeps each all-or-nothing.
    const one = this.db.transaction(insertAt);
    this.appendManyTx = this.db.transaction((requests: readonly AppendRequest[]) => requests.map(({ stream, events, expectedRevision }) => {
      try {
        return one(stream, events, expectedRevision);
      } catch (error) {
        if (error instanceof ConcurrencyError) return error;
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return new ConcurrencyError(stream, expectedRevision);
        throw error;
      }
    })).immediate;
  }

  async appendMany(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
    if (requests.some((r) => r.events.length === 0)) throw new EffectdError('internal', 'append needs at least one event');
    return requests.length === 0 ? [] : this.appendManyTx(requests);
  }

  async append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    if (events.length === 0) throw new EffectdError('internal', 'append needs at least one event');
    try {
      return this.appendTx(stream, events, expectedRevision);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new ConcurrencyError(stream, expectedRevision);
      throw error;
    }
  }

  async readStream(stream: string, afterRevision = NO_STREAM): Promise<RecordedEvent[]> {
    return (this.byStream.all(stream, afterRevision) as Row[]).map(toRecorded);
  }

  async readStreams(reads: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    return reads.map(({ stream, afterRevision = NO_STREAM }) => (this.byStream.all(stream, afterRevision) as Row[]).map(toRecorded));
  }

  async locateEffect(effectId: string): Promise<string | undefined> {
    return (this.declaring.get(effectId) as { stream: string } | undefined)?.stream;
  }

  async readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]> {
    return (this.fromPosition.all(fromPosition, limit) as Row[]).map(toRecorded);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

export function toRecorded(row: Row): RecordedEvent {
  return { stream: row.stream, revision: row.revision, position: row.position, event: decodeLedgerEvent(row.type, decodeStoredEvent(row.stream, row.type, JSON.parse(row.data))) };
}

/**
 * The ledger holds every argument of every effect: its file is 0600 whatever the umask. SQLite
 * creates the -wal and -shm files with the database file's own mode, so creating that file 0600
 * first (and tightening files an older version left 0644) covers all three.
 */
function privateDatabaseFiles(file: string): void {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return;
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    if (existsSync(path) && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
}
