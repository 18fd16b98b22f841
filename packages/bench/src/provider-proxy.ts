import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Where the proxy injects a fault around its caller (effectd, or a baseline's client):
 * - `crash-before-forward`: hold the request, run the hook (SIGKILL effectd, crash the agent), then
 *   deliver it to the provider anyway: the caller died with its request in flight.
 * - `crash-after-response`: deliver it, hold the provider's response, run the hook, then drop the
 *   response: the caller died after the reply reached it, before it could record it.
 * - `notify-on-forward`: deliver it and run the hook at once, e.g. to move the workflow elsewhere.
 * - `deliver-late`: hold the request `delayMs` (a slow network, a queue in front of the provider),
 *   then deliver it; its reply goes nowhere and the caller's connection is cut. The caller gave up
 *   on it long before (its timeout); the provider still commits it, after the tool's settle window.
 */
export type ProxyAction = 'crash-before-forward' | 'crash-after-response' | 'notify-on-forward' | 'deliver-late';

export interface ProxyRule {
  pathPrefix: string;
  /** 1-based among POSTs under `pathPrefix` since the rule was armed. */
  nth: number;
  action: ProxyAction;
  /** `deliver-late`: how long the request is held before the provider sees it (ms after it reached the proxy). */
  delayMs?: number;
  hook: () => Promise<void> | void;
}

/** A request the proxy delivered late (`deliver-late`): what it carried and what the provider answered. */
export interface LateDelivery {
  /** The request as the caller sent it (its body names the effect, through effectd's stamped reference). */
  method: string;
  path: string;
  body: string;
  /** Date.now() when it reached the proxy, and when the provider got it. */
  receivedAt: number;
  deliveredAt: number;
  /** The provider's answer to it (undefined: none came back). */
  status?: number;
}

export interface ProxyStats {
  seen: number;
  fired: number;
  /** POSTs refused because they named nothing of the current cell (stragglers of an earlier one). */
  stale: number;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'proxy-connection', 'upgrade']);

/**
 * A small HTTP proxy in front of one simulated provider. It can be retargeted per benchmark cell,
 * taken down (connections refused: nothing was sent) and brought back on the same port, and it
 * runs the fault hooks that need to happen *around* the caller rather than inside the provider.
 */
export class ProviderProxy {
  private readonly server: http.Server;
  private port = 0;
  private upstream: string | undefined;
  private tags: string[] | undefined;
  private rule: ProxyRule | undefined;
  private counters: ProxyStats = { seen: 0, fired: 0, stale: 0 };
  private late: LateDelivery[] = [];
  private isDown = false;
  private readonly pending = new Set<Promise<unknown>>();

  private constructor() {
    this.server = http.createServer((req, res) => {
      const work = this.handle(req, res).catch(() => res.destroy());
      this.pending.add(work);
      void work.finally(() => this.pending.delete(work));
    });
    this.server.keepAliveTimeout = 2_000;
  }

  static async start(port = 0): Promise<ProviderProxy> {
    const proxy = new ProviderProxy();
    await proxy.listen(port);
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Points the proxy at a cell's provider; POSTs must then name one of `tags` (in the body or the
   * path) to be forwarded: the cell's tag, which its business identifiers carry, or the stamp in the
   * ids its providers issue (a refund names a charge, a release names a hold).
   */
  retarget(upstream: string | undefined, tags?: string[]): void {
    this.upstream = upstream;
    this.tags = tags;
    this.rule = undefined;
    this.counters = { seen: 0, fired: 0, stale: 0 };
    this.late = [];
  }

  arm(rule: ProxyRule | undefined): void {
    this.rule = rule;
  }

  stats(): ProxyStats {
    return { ...this.counters };
  }

  /** The requests delivered late since the proxy was last retargeted (one per cell), in order. */
  lateDeliveries(): LateDelivery[] {
    return this.late.map((d) => ({ ...d }));
  }

  /** Stops listening and cuts every open connection: the next connection attempt is refused. */
  async down(): Promise<void> {
    if (this.isDown) return;
    this.isDown = true;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  async up(): Promise<void> {
    if (!this.isDown) return;
    await this.listen(this.port);
    this.isDown = false;
  }

  /** Resolves once every request the proxy holds or forwards has finished. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    this.rule = undefined;
    if (!this.isDown) {
      this.isDown = true;
      await new Promise<void>((resolve) => {
        this.server.close(() => resolve());
        this.server.closeAllConnections();
      });
    }
    await this.idle();
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    const body = await readAll(req);
    const upstream = this.upstream;
    const method = (req.method ?? 'GET').toUpperCase();
    if (upstream === undefined) return reply(res, 503, { error: 'bench proxy: no provider behind this proxy right now' });
    if (method === 'POST' && this.tags !== undefined && !this.tags.some((tag) => body.toString('utf8').includes(tag) || (req.url ?? '').includes(tag))) {
      this.counters.stale += 1;
      return reply(res, 503, { error: 'bench proxy: a request of an earlier benchmark cell; not forwarded' });
    }
    const rule = this.rule;
    let action: ProxyAction | undefined;
    if (rule && method === 'POST' && (req.url ?? '').startsWith(rule.pathPrefix)) {
      this.counters.seen += 1;
      if (this.counters.seen === rule.nth) {
        this.counters.fired += 1;
        action = rule.action;
      }
    }
    const target = new URL(req.url ?? '/', upstream);
    switch (action) {
      case undefined:
        return this.forward(target, req, body, res);
      case 'notify-on-forward': {
        const forwarded = this.forward(target, req, body, res);
        await rule!.hook();
        return forwarded;
      }
      case 'crash-before-forward':
        await rule!.hook();
        res.destroy();
        await send(target, req, body);
        return;
      case 'crash-after-response':
        await send(target, req, body);
        await rule!.hook();
        res.destroy();
        return;
      case 'deliver-late': {
        const late = this.late;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, receivedAt + (rule!.delayMs ?? 0) - Date.now())));
        const deliveredAt = Date.now();
        const status = await send(target, req, body);
        late.push({ method, path: req.url ?? '/', body: body.toString('utf8'), receivedAt, deliveredAt, ...(status !== undefined ? { status } : {}) });
        res.destroy();
        await rule!.hook();
        return;
      }
    }
  }

  /** Relays the provider's answer; a connection the provider cut is cut towards the caller too. */
  private forward(target: URL, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const upstream = http.request(target, { method: req.method, headers: forwardHeaders(req, body), agent: false });
      const cut = () => {
        res.destroy();
        resolve();
      };
      upstream.on('error', cut);
      // The caller gave up (timeout, cancel, crash): the provider sees the disconnect, as it would.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      upstream.on('response', (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('error', cut);
        answer.on('aborted', cut);
        answer.on('end', () => {
          if (!res.destroyed) {
            const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
            const payload = Buffer.concat(chunks);
            res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': String(payload.length) });
            res.end(payload);
          }
          resolve();
        });
      });
      upstream.end(body);
    });
  }
}

/** Delivers a request and waits for the provider to finish with it, discarding the answer (its status: undefined when none came). */
function send(target: URL, req: http.IncomingMessage, body: Buffer): Promise<number | undefined> {
  return new Promise((resolve) => {
    const upstream = http.request(target, { method: req.method, headers: forwardHeaders(req, body), agent: false });
    upstream.on('error', () => resolve(undefined));
    upstream.on('response', (answer) => {
      answer.resume();
      answer.on('end', () => resolve(answer.statusCode));
      answer.on('error', () => resolve(undefined));
      answer.on('aborted', () => resolve(undefined));
    });
    upstream.end(body);
  });
}

function forwardHeaders(req: http.IncomingMessage, body: Buffer): http.OutgoingHttpHeaders {
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
  headers['content-length'] = String(body.length);
  return headers;
}

function readAll(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('the caller went away before sending the whole request'));
    });
  });
}

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}
