import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IdSource } from './ids.js';
import { json, type Call, type Execution, type Reply, type Route, type SimProvider } from './sim-http.js';
import type { SimClock } from './sim-clock.js';

export interface WeakToolsOptions {
  /** Where append-line journals live (under `<dataDir>/append-line/`); default a fresh temp dir. */
  dataDir?: string;
}

interface JournalLine {
  file: string;
  lineNumber: number;
  line: string;
  /** Known only for lines this process appended. */
  createdAtMs: number | null;
}

interface Notification {
  seq: number;
  channel: string;
  text: string;
  createdAtMs: number;
}

interface Resource {
  id: string;
  name: string;
  spec: unknown;
  createdAtMs: number;
  deletedAtMs: number | null;
}

const FILE_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const weakError = (status: number, message: string): Reply => json(status, { error: message });
const noUndo = (reply: Reply): Reply => reply;

/**
 * Tools with no idempotency key: an append-only journal (a real file, searchable by reference), a
 * notifier with no lookup at all, and a resource creator whose names are not unique.
 */
export class WeakToolsSimulator implements SimProvider {
  readonly routes: readonly Route[];
  private readonly journalDir: string;
  private readonly ownsDataDir: boolean;
  private lineTimes = new Map<string, number>();
  private notifications: Notification[] = [];
  private resources = new Map<string, Resource>();

  constructor(
    private readonly clock: SimClock,
    private readonly ids: IdSource,
    options: WeakToolsOptions = {},
  ) {
    this.ownsDataDir = options.dataDir === undefined;
    const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'effectd-weak-'));
    this.journalDir = join(dataDir, 'append-line');
    this.routes = [
      { method: 'POST', pattern: '/append-line', write: (call) => this.appendLine(call) },
      { method: 'GET', pattern: '/append-line/search', read: (call) => this.searchLines(call) },
      { method: 'POST', pattern: '/notify', write: (call) => this.notify(call) },
      { method: 'POST', pattern: '/resources', write: (call) => this.createResource(call) },
      { method: 'GET', pattern: '/resources', read: (call) => this.findResources(call) },
      { method: 'POST', pattern: '/resources/:id/delete', write: (call) => this.deleteResource(call) },
    ];
  }

  get dataDir(): string {
    return join(this.journalDir, '..');
  }

  oracle(): { lines: JournalLine[]; notifications: Notification[]; resources: (Resource & { deleted: boolean })[] } {
    return {
      lines: this.readJournals(),
      notifications: structuredClone(this.notifications),
      resources: [...this.resources.values()].map((r) => ({ ...structuredClone(r), deleted: r.deletedAtMs !== null })),
    };
  }

  reset(): void {
    rmSync(this.journalDir, { recursive: true, force: true });
    this.lineTimes = new Map();
    this.notifications = [];
    this.resources = new Map();
  }

  close(): void {
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }

  faultReply(status: number, body?: unknown): Reply {
    return body !== undefined ? json(status, body) : weakError(status, `Injected failure (${status}).`);
  }

  malformedBody(message: string): Reply {
    return weakError(400, `Invalid request body: ${message}`);
  }

  notFound(method: string, path: string): Reply {
    return weakError(404, `No route for ${method} ${path}.`);
  }

  private appendLine(call: Call): Reply | Execution {
    const body = asObject(call.body);
    const file = body.file ?? 'journal.log';
    if (typeof file !== 'string' || !FILE_NAME.test(file)) return weakError(400, '`file` must be a plain file name.');
    if (typeof body.line !== 'string' || /[\r\n]/.test(body.line)) return weakError(400, '`line` must be a string without line breaks.');
    const line = body.line;
    return {
      commit: () => {
        mkdirSync(this.journalDir, { recursive: true });
        const path = join(this.journalDir, file);
        appendFileSync(path, `${line}\n`);
        const lineNumber = readLines(path).length;
        this.lineTimes.set(`${file}:${lineNumber}`, this.clock.now());
        return json(200, { ok: true, file, lineNumber });
      },
      fail: noUndo,
    };
  }

  private searchLines(call: Call): Reply {
    const ref = call.query.get('ref');
    if (ref === null || ref === '') return weakError(400, '`ref` is required.');
    const file = call.query.get('file');
    const lines = this.readJournals().filter((l) => l.line.includes(ref) && (file === null || l.file === file));
    return json(200, { lines });
  }

  private notify(call: Call): Reply | Execution {
    const { channel, text } = asObject(call.body);
    if (typeof channel !== 'string' || channel === '' || typeof text !== 'string') {
      return weakError(400, '`channel` (non-empty) and `text` are required strings.');
    }
    return {
      commit: () => {
        this.notifications.push({ seq: this.notifications.length + 1, channel, text, createdAtMs: this.clock.now() });
        return json(200, { ok: true });
      },
      fail: noUndo,
    };
  }

  private createResource(call: Call): Reply | Execution {
    const { name, spec } = asObject(call.body);
    if (typeof name !== 'string' || name === '') return weakError(400, '`name` is required.');
    return {
      commit: () => {
        const resource: Resource = { id: this.ids.next('res'), name, spec: spec ?? null, createdAtMs: this.clock.now(), deletedAtMs: null };
        this.resources.set(resource.id, resource);
        return json(200, { id: resource.id, name });
      },
      fail: noUndo,
    };
  }

  /** Lookup by name only; deleted resources are not listed. */
  private findResources(call: Call): Reply {
    const name = call.query.get('name');
    if (name === null) return weakError(400, '`name` is required.');
    const found = [...this.resources.values()].filter((r) => r.name === name && r.deletedAtMs === null);
    return json(200, { resources: found.map(({ id, name: n, spec, createdAtMs }) => structuredClone({ id, name: n, spec, createdAtMs })) });
  }

  private deleteResource(call: Call): Reply | Execution {
    const resource = this.resources.get(call.params.id);
    if (resource === undefined) return weakError(404, `No such resource: ${call.params.id}`);
    return {
      commit: () => {
        resource.deletedAtMs ??= this.clock.now();
        return json(200, { id: resource.id, deleted: true });
      },
      fail: noUndo,
    };
  }

  private readJournals(): JournalLine[] {
    if (!existsSync(this.journalDir)) return [];
    return readdirSync(this.journalDir)
      .sort()
      .flatMap((file) =>
        readLines(join(this.journalDir, file)).map((line, i) => ({
          file,
          lineNumber: i + 1,
          line,
          createdAtMs: this.lineTimes.get(`${file}:${i + 1}`) ?? null,
        })),
      );
  }
}

function asObject(body: unknown): Record<string, unknown> {
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

function readLines(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}
