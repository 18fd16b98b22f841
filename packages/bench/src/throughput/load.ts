import { Agent, request } from 'undici';

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
 * the difference between them is effectd): keep-alive connections, one per caller, over undici
 * (the client effectd itself calls providers with, src/providers/http-exchange.ts: about half
 * node:http's CPU per request, and the load generator shares this box's two cores with what it
 * measures). `connections` and `keepAliveTimeout` per origin override the defaults (the DBOS app
 * posts to the provider with effectd's settings).
 */
export function httpPoster(options: { connections?: number; keepAliveTimeout?: number } = {}): { post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }>; close(): void } {
  const dispatcher = new Agent({ connections: options.connections ?? 1024, keepAliveTimeout: options.keepAliveTimeout ?? 4_000 });
  return {
    post: async (url, headers, body) => {
      const res = await request(url, { method: 'POST', dispatcher, headers: { ...headers, 'content-type': 'application/json' }, body });
      return { status: res.statusCode, body: await res.body.text() };
    },
    close: () => void dispatcher.destroy().catch(() => {}),
  };
}
