// A real HTTP hop in front of a provider that can stop listening, so calls through it are refused at
// the TCP level (ECONNREFUSED) — a provider that is down — and can listen again on the same port.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SwitchableProxy {
  url: string;
  /** Stops listening right after answering the first request that matches (that answer still arrives). */
  goDownAfter(matches: (req: IncomingMessage) => boolean): void;
  isDown(): boolean;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startSwitchableProxy(target: string): Promise<SwitchableProxy> {
  const upstream = new URL(target);
  let trigger: ((req: IncomingMessage) => boolean) | undefined;
  let down = false;
  const server: Server = createServer((req, res) => {
    const last = trigger?.(req) ?? false;
    if (last) trigger = undefined;
    const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      // The client must not keep this connection for its next call: that call has to meet a closed port.
      res.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...(last ? { connection: 'close' } : {}) });
      answer.pipe(res);
    });
    forward.on('error', (error) => { res.writeHead(502); res.end(String(error)); });
    req.pipe(forward);
    if (last) res.on('finish', () => { down = true; server.close(); server.closeAllConnections(); });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    goDownAfter: (matches) => { trigger = matches; },
    isDown: () => down,
    up: () => new Promise<void>((ok) => { down = false; server.listen(port, '127.0.0.1', ok); }),
    close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); if (down) ok(); }),
  };
}
