import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleAdmin, isAdminPath, type AdminTarget } from './admin.js';
import { sha256Hex } from './canonical.js';
import { FaultBook, type FaultAction } from './faults.js';
import { HeldRequests } from './held-requests.js';
import { IdSource } from './ids.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import { parseBody, readRawBody } from './request-body.js';
import { headerValue, isExecution, json, matchPattern, type Call, type Reply, type SimProvider } from './sim-http.js';
import { SimClock } from './sim-clock.js';
import { createProvider, type SimulatorKind, type SimulatorOptionsByKind } from './simulator-kinds.js';

/** A request ready to be answered: `run` executes it, `fail` makes execution end in an injected error. */
interface Prepared {
  run(): Reply;
  fail(injected: Reply): Reply;
}

const fixed = (reply: Reply): Prepared => ({ run: () => reply, fail: () => reply });

/** One simulated provider with its clock, fault book, request log and held requests. */
export class Simulator implements AdminTarget {
  readonly clock = new SimClock();
  readonly faults = new FaultBook();
  readonly log = new RequestLog();
  readonly provider: SimProvider;
  private readonly ids: IdSource;
  private readonly held: HeldRequests;

  constructor(
    readonly kind: SimulatorKind,
    seed: number | undefined,
    options: SimulatorOptionsByKind[SimulatorKind] | undefined,
  ) {
    this.ids = new IdSource(seed);
    this.held = new HeldRequests(this.clock);
    this.provider = createProvider(kind, this.clock, this.ids, options);
  }

  reset(): void {
    this.held.dropAll();
    this.provider.reset();
    this.ids.reset();
    this.faults.clear();
    this.log.clear();
  }

  dispose(): void {
    this.held.dispose();
    this.provider.close?.();
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw: Buffer;
    try {
      raw = await readRawBody(req);
    } catch (error) {
      writeReply(res, json(413, { error: (error as Error).message }));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://simulator');
    const method = (req.method ?? 'GET').toUpperCase();
    if (isAdminPath(url.pathname)) {
      writeReply(res, handleAdmin(this, method, url.pathname, raw));
      return;
    }
    this.dispatch(req, res, method, url, raw);
  }

  /** Synchronous up to the fault's hold, so a logged request has already claimed its key. */
  private dispatch(req: IncomingMessage, res: ServerResponse, method: string, url: URL, raw: Buffer): void {
    const receivedAt = this.clock.now();
    const { call, prepare } = this.plan(req, method, url, raw);
    const clientToken = (call.body as { clientToken?: unknown } | undefined)?.clientToken;
    const entry = this.log.open({
      receivedAt,
      method,
      path: url.pathname + url.search,
      idempotencyKey: headerValue(req.headers, 'idempotency-key') ?? null,
      clientToken: typeof clientToken === 'string' ? clientToken : null,
      bodyDigest: raw.length === 0 ? null : sha256Hex(raw),
      fault: null,
    });
    const action = this.faults.pick(method, url.pathname, raw.toString('utf8'));
    entry.fault = action?.type ?? null;
    const out = new Outlet(res, entry);
    try {
      this.apply(action, prepare, receivedAt, out);
    } catch (error) {
      out.answer(json(500, { error: `simulator failure: ${(error as Error).message}` }));
    }
  }

  private apply(action: FaultAction | undefined, prepare: () => Prepared, receivedAt: number, out: Outlet): void {
    switch (action?.type) {
      case undefined:
        out.answer(prepare().run());
        return;
      case 'drop-before-mutation':
        out.drop();
        return;
      case 'drop-after-mutation':
        out.drop(prepare().run());
        return;
      case 'status': {
        const injected = this.provider.faultReply(action.status, action.body);
        // Rate limiting runs before any idempotency layer, so a 429 never reaches execution.
        if (action.afterCommit === true && action.status !== 429) {
          // The mutation happens, then the injected failure replaces the stored answer; a request
          // refused before execution (replay, mismatch, validation) is answered as it would be.
          const prepared = prepare();
          prepared.run();
          out.answer(prepared.fail(injected));
          return;
        }
        const duringExecution = action.afterExecutionBegan === true && action.status !== 429;
        out.answer(duringExecution ? prepare().fail(injected) : injected);
        return;
      }
      case 'delay': {
        const prepared = prepare();
        this.held.forRealMs(action.ms, () => out.guard(() => out.answer(prepared.run())), () => out.drop());
        return;
      }
      case 'late-commit': {
        const prepared = prepare();
        const dueAt = receivedAt + action.commitAfterMs;
        this.held.untilSimTime(dueAt, () => out.guard(() => out.drop(prepared.run())), () => out.drop());
        return;
      }
    }
  }

  private plan(req: IncomingMessage, method: string, url: URL, raw: Buffer): { call: Call; prepare: () => Prepared } {
    let body: unknown = {};
    let malformed: string | undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      try {
        body = parseBody(raw, headerValue(req.headers, 'content-type'));
      } catch (error) {
        malformed = (error as Error).message;
      }
    }
    const call: Call = { method, path: url.pathname, params: {}, query: url.searchParams, headers: req.headers, body };
    const prepare = (): Prepared => {
      if (malformed !== undefined) return fixed(this.provider.malformedBody(malformed));
      for (const route of this.provider.routes) {
        if (route.method !== method) continue;
        const params = matchPattern(route.pattern, url.pathname);
        if (params === undefined) continue;
        call.params = params;
        if (route.method === 'GET') return { run: () => route.read(call), fail: (injected) => injected };
        const outcome = route.write(call);
        return isExecution(outcome) ? { run: () => outcome.commit(), fail: (injected) => outcome.fail(injected) } : fixed(outcome);
      }
      return fixed(this.provider.notFound(method, url.pathname));
    };
    return { call, prepare };
  }
}

/** Where one request's outcome goes: an HTTP response, or a destroyed socket. Both are logged. */
class Outlet {
  private settled = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly entry: RequestLogEntry,
  ) {
    res.on('close', () => {
      if (!this.settled) entry.clientDisconnected = true;
    });
  }

  answer(reply: Reply): void {
    if (this.settled) return;
    this.settled = true;
    this.entry.status = reply.status;
    this.entry.replayed = reply.replayed === true;
    writeReply(this.res, reply);
  }

  /** Destroys the socket; `executed` is the reply the client never sees. */
  drop(executed?: Reply): void {
    if (this.settled) return;
    this.settled = true;
    this.entry.status = 'dropped';
    this.entry.unsentStatus = executed?.status ?? null;
    this.entry.replayed = executed?.replayed === true;
    this.res.socket?.destroy();
    this.res.destroy();
  }

  guard(release: () => void): void {
    try {
      release();
    } catch (error) {
      this.answer(json(500, { error: `simulator failure: ${(error as Error).message}` }));
    }
  }
}

export function writeReply(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
  });
  res.end(text);
}
