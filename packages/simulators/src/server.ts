import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Simulator, writeReply } from './simulator.js';
import type { SimulatorKind, SimulatorOptionsByKind } from './simulator-kinds.js';
import { json } from './sim-http.js';

export type { SimulatorKind, SimulatorOptionsByKind } from './simulator-kinds.js';

export interface StartOptions<K extends SimulatorKind> {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Stamped into every id, so runs with the same seed and requests see the same ids. */
  seed?: number;
  options?: SimulatorOptionsByKind[K];
}

export interface RunningSimulator {
  kind: SimulatorKind;
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startSimulator<K extends SimulatorKind>(kind: K, opts: StartOptions<K> = {}): Promise<RunningSimulator> {
  const host = opts.host ?? '127.0.0.1';
  const simulator = new Simulator(kind, opts.seed, opts.options);
  const server = createServer((req, res) => {
    simulator.serve(req, res).catch((error: unknown) => writeReply(res, json(500, { error: String(error) })));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    kind,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        simulator.dispose();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
