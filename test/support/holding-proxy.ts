// A TCP hop (node:net) in front of a provider that can hold one request's bytes for a while before
// the provider sees them, and swallow that request's reply: a request that reached a slow provider
// late (an event-loop stall, a congested link). The caller gives up (its timeout), the provider
// still receives the request afterwards and commits it; the caller never hears about it.
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface HeldRequest {
  /** The request line, e.g. `POST /v1/charges HTTP/1.1`. */
  requestLine: string;
  /** Date.now() when its first bytes reached the proxy. */
  receivedAt: number;
  /** When the caller closed its connection (it gave up), if it did. */
  callerClosedAt?: number;
  /** When the held bytes were written to the provider. */
  forwardedAt?: number;
  /** When the provider's reply (swallowed, never passed on) came back, and its status line. */
  repliedAt?: number;
  replyStatusLine?: string;
}

export interface HoldingProxy {
  url: string;
  /** Held requests, in order. */
  readonly held: HeldRequest[];
  /**
   * The next request whose request line matches is held `holdMs` and then forwarded on a fresh
   * connection to the provider; its reply is swallowed and the caller's connection closed. Once.
   */
  holdNext(matches: (requestLine: string) => boolean, holdMs: number): void;
  /**
   * Requests whose request line matches are forwarded at once (the provider answers them as of
   * now), but their replies reach the caller only `delayMs` later: a slow way back (a loaded caller).
   */
  delayReplies(matches: (requestLine: string) => boolean, delayMs: number): void;
  /** Resolves when every held request was forwarded and the provider answered it. */
  drained(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const upstream = new URL(target);
  const port = Number(upstream.port);
  const host = upstream.hostname;
  const held: HeldRequest[] = [];
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    return socket;
  };
  let rule: { matches: (line: string) => boolean; holdMs: number } | undefined;
  let slowReplies: { matches: (line: string) => boolean; delayMs: number } | undefined;

  const forwardLater = (record: HeldRequest, chunks: Buffer[], caller: Socket, holdMs: number) => {
    setTimeout(() => {
      const provider = track(connect(port, host));
      record.forwardedAt = Date.now();
      provider.write(Buffer.concat(chunks));
      provider.once('data', (reply) => {
        record.repliedAt = Date.now();
        record.replyStatusLine = reply.toString('latin1').split('\r\n', 1)[0];
        provider.destroy();
        caller.destroy();
      });
    }, holdMs);
  };

  const server: Server = createServer((caller) => {
    track(caller);
    let provider: Socket | undefined;
    const toProvider = () => {
      if (!provider || provider.destroyed) {
        provider = track(connect(port, host));
        provider.on('data', (d) => {
          if (holding) return;
          if (replyDelayMs > 0) setTimeout(() => { if (!caller.destroyed) caller.write(d); }, replyDelayMs);
          else caller.write(d);
        });
        provider.on('close', () => { if (!holding) setTimeout(() => caller.destroy(), replyDelayMs); });
      }
      return provider;
    };
    /** Set once this connection carries the held request: everything after it is held too. */
    let holding: Buffer[] | undefined;
    /** Replies on this connection are delayed once it carried a request whose replies are slow. */
    let replyDelayMs = 0;
    caller.on('data', (chunk: Buffer) => {
      if (holding) {
        holding.push(chunk);
        return;
      }
      // Node's HTTP client does not pipeline: a request starts at a chunk boundary.
      const requestLine = chunk.toString('latin1', 0, Math.min(chunk.length, 512)).split('\r\n', 1)[0] ?? '';
      if (rule && /^[A-Z]+ \S+ HTTP\/1\.[01]$/.test(requestLine) && rule.matches(requestLine)) {
        const { holdMs } = rule;
        rule = undefined;
        holding = [chunk];
        const record: HeldRequest = { requestLine, receivedAt: Date.now() };
        held.push(record);
        provider?.destroy();
        caller.on('close', () => { record.callerClosedAt ??= Date.now(); });
        forwardLater(record, holding, caller, holdMs);
        return;
      }
      if (slowReplies && /^[A-Z]+ \S+ HTTP\/1\.[01]$/.test(requestLine) && slowReplies.matches(requestLine)) replyDelayMs = slowReplies.delayMs;
      toProvider().write(chunk);
    });
    caller.on('close', () => { if (!holding) provider?.destroy(); });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port: own } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${own}`,
    held,
    holdNext: (matches, holdMs) => { rule = { matches, holdMs }; },
    delayReplies: (matches, delayMs) => { slowReplies = { matches, delayMs }; },
    drained: async (timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      while (held.some((h) => h.repliedAt === undefined)) {
        if (Date.now() > deadline) throw new Error(`the held request(s) were not answered by the provider within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((ok) => {
      for (const s of sockets) s.destroy();
      server.close(() => ok());
    }),
  };
}
