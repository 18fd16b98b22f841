import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';
import { decodeLedgerEvent, type LedgerEvent } from '../core/events.js';
import { ConcurrencyError, NO_STREAM, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent, type StreamRead } from './ledger.port.js';
import { decodeStoredEvent, encodeStoredEvent, type StoredEncoding } from './postgres-encoding.js';
import { EffectdError, NOTHING_RECORDED } from '../core/errors.js';

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
  private readonly probe: Database.Statement;
  /** The file as opened (device and inode), to notice it removed or replaced under the running process. */
  private readonly opened: { dev: number; ino: number } | undefined;
  /** Set by probeWrite when the file is gone, replaced or made read-only: appends are refused with it. */
  private refusal: string | undefined;

  constructor(private readonly file: string, options: SqliteLedgerOptions = {}) {
    privateDatabaseFiles(file);
    this.encoding = options.encoding ?? 'compact';
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    this.db.pragma('busy_timeout = 5000');
    // No memory-mapped reads of the database file: a file that becomes unreadable under a mapping
    // kills the process with SIGBUS, without a word; read() calls fail with an error instead. (The
    // build's default is 0 already; said here so it stays so. The WAL index, -shm, is always mapped.)
    this.db.pragma('mmap_size = 0');
    const stat = isFile(file) ? statSync(file) : undefined;
    this.opened = stat ? { dev: stat.dev, ino: stat.ino } : undefined;
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
      CREATE INDEX IF NOT EXISTS events_effect_declared ON events (json_extract(data, '$.effectId')) WHERE type = 'EffectDeclared';
      CREATE TABLE IF NOT EXISTS write_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL)`);
    this.probe = this.db.prepare('INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)');
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
    if (this.refusal) throw new EffectdError('unavailable', `${this.refusal}; ${NOTHING_RECORDED}`, { retryAfterMs: 5_000 });
    return requests.length === 0 ? [] : this.appendManyTx(requests);
  }

  async append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    if (events.length === 0) throw new EffectdError('internal', 'append needs at least one event');
    if (this.refusal) throw new EffectdError('unavailable', `${this.refusal}; ${NOTHING_RECORDED}`, { retryAfterMs: 5_000 });
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

  /**
   * One write to the one-row `write_probe` table (no workflow stream): a full disk or a read-only
   * file system refuses it. And the file checked: removed or replaced under the running process
   * (SQLite would go on writing to a file no restart can open) or made read-only (`chmod a-w`)
   * means appends are refused from now on, with that reason, until it is restored.
   */
  async probeWrite(): Promise<void> {
    this.refusal = this.fileProblem();
    if (this.refusal) throw new EffectdError('unavailable', this.refusal, { retryAfterMs: 5_000 });
    this.probe.run(Date.now());
  }

  private fileProblem(): string | undefined {
    if (!this.opened) return undefined;
    let stat;
    try {
      stat = statSync(this.file);
    } catch {
      return `the ledger file ${this.file} was removed while effectd ran; appends are refused (they would go to a file no restart can open): restore it and restart effectd`;
    }
    if (stat.dev !== this.opened.dev || stat.ino !== this.opened.ino) return `the ledger file ${this.file} was replaced while effectd ran; appends are refused: restart effectd to open the file now there`;
    if ((stat.mode & 0o222) === 0) return `the ledger file ${this.file} was made read-only (mode ${(stat.mode & 0o777).toString(8)}) while effectd ran; appends are refused until it is writable again (chmod u+w)`;
    return undefined;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** A database in a file of its own (not `:memory:` or a `file:` URI). */
function isFile(file: string): boolean {
  return file !== '' && file !== ':memory:' && !file.startsWith('file:') && existsSync(file);
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
