import http from 'node:http';
import { readResponse } from '../../../src/providers/http-response.js';

/** What one agent-side HTTP exchange came to; `cancelled` is the caller giving up on purpose. */
export type Exchange =
  | { kind: 'response'; status: number; headers: Record<string, string>; body: unknown; ms: number }
  | { kind: 'not-sent'; error: string; ms: number }
  | { kind: 'lost'; error: string; ms: number }
  | { kind: 'cancelled'; ms: number };

export interface ExchangeRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * One HTTP exchange on a fresh connection (no pooling, so a refused or killed peer shows on the
 * very next call). Never retried here: retrying is what the policies differ in.
 */
export function exchange(request: ExchangeRequest): Promise<Exchange> {
  const started = performance.now();
  const ms = () => Math.round((performance.now() - started) * 10) / 10;
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const headers = { ...request.headers, ...(request.body !== undefined ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}) };
    const req = http.request(request.url, { method: request.method, headers, agent: false });
    const onAbort = () => {
      finish({ kind: 'cancelled', ms: ms() });
      req.destroy();
    };
    if (request.signal?.aborted) {
      finish({ kind: 'cancelled', ms: 0 });
      return;
    }
    request.signal?.addEventListener('abort', onAbort, { once: true });
    if (request.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        finish({ kind: 'lost', error: `timeout after ${request.timeoutMs} ms`, ms: ms() });
        req.destroy();
      }, request.timeoutMs);
    }
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') finish({ kind: 'not-sent', error: 'ECONNREFUSED', ms: ms() });
      else finish({ kind: 'lost', error: error.code ?? error.message, ms: ms() });
    });
    req.on('response', (res) => readResponse(
      res,
      (response) => finish({ kind: 'response', ...response, ms: ms() }),
      (error) => finish({ kind: 'lost', error, ms: ms() }),
    ));
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', done);
      clearTimeout(timer);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
