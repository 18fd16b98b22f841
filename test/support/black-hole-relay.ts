// A TCP relay in front of a server (PostgreSQL here) that can turn into a black hole, as an iptables
// DROP between two hosts does: connections are accepted and kept open, but nothing is forwarded either
// way and nothing is refused or closed. Healing forwards again what was held (as TCP retransmits do
// once the packets get through), so a connection that stayed idle through the cut lives on.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface BlackHoleRelay {
  port: number;
  blackHole(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function startBlackHoleRelay(host: string, port: number): Promise<BlackHoleRelay> {
  let holed = false;
  const pairs = new Set<{ client: Socket; upstream?: Socket }>();
  const join = (pair: { client: Socket; upstream?: Socket }) => {
    pair.upstream ??= connect(port, host);
    pair.upstream.on('error', () => pair.client.destroy());
    pair.upstream.on('close', () => pair.client.destroy());
    pair.client.pipe(pair.upstream);
    pair.upstream.pipe(pair.client);
  };
  const hold = (pair: { client: Socket; upstream?: Socket }) => {
    pair.client.unpipe();
    pair.client.pause();
    pair.upstream?.unpipe();
    pair.upstream?.pause();
  };
  const server: Server = createServer((client) => {
    const pair: { client: Socket; upstream?: Socket } = { client };
    pairs.add(pair);
    client.on('error', () => {});
    client.on('close', () => {
      pairs.delete(pair);
      pair.upstream?.destroy();
    });
    if (holed) client.pause();
    else join(pair);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as AddressInfo).port,
    blackHole: () => {
      holed = true;
      for (const pair of pairs) hold(pair);
    },
    heal: () => {
      holed = false;
      for (const pair of pairs) {
        if (pair.upstream) {
          pair.client.pipe(pair.upstream);
          pair.upstream.pipe(pair.client);
        } else join(pair);
      }
    },
    close: () => new Promise<void>((ok) => {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      server.close(() => ok());
    }),
  };
}
