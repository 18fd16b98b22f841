import http from 'node:http';

/** One call of a lane: resolves true when the effect is done, false otherwise (never rejects). */
export type Call = (index: number) => Promise<boolean>;

export interface LoadResult {
  /** submit → answer, ms, sorted. */
  latencies: number[];
  notDone: number;
  seconds: number;
}

/**
 * Closed loop: `concurrency` callers, each sending its next call as soon as the previous one was
 * answered (as that many agents working at once would), until `count` calls were answered.
 */
export async function closedLoop(count: number, concurrency: number, call: Call): Promise<LoadResult> {
  const latencies: number[] = [];
  let notDone = 0;
  let next = 0;
  const started = performance.now();
  const caller = async () => {
    while (next < count) {
      const index = next++;
      const t0 = performance.now();
      const done = await call(index);
      latencies.push(performance.now() - t0);
      if (!done) notDone++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, caller));
  const seconds = (performance.now() - started) / 1000;
  return { latencies: latencies.sort((a, b) => a - b), notDone, seconds };
}

export const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

/**
 * The load generator's HTTP client, the same for the direct lane and effectd's HTTP ingress (so
 * the difference between them is effectd): keep-alive sockets, one per caller. `agent` overrides
 * the socket settings (the DBOS app posts to the provider with effectd's).
 */
export function httpPoster(agent: http.AgentOptions = { maxSockets: 1024 }): { post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }>; close(): void } {
  const sockets = new http.Agent({ keepAlive: true, ...agent });
  return {
    post: (url, headers, body) => new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent: sockets, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString() } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    }),
    close: () => sockets.destroy(),
  };
}
