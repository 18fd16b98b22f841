import http from 'node:http';
import https from 'node:https';
import type { DispatchResult } from '../core/dispatch-result.js';

const agents = { 'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }), 'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }) };

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

/**
 * One HTTP exchange, never retried. A refused connection is `not-sent` (the request provably never
 * left); anything after the connection opened without a full answer is `lost`.
 */
export function httpExchange(request: HttpRequest): Promise<DispatchResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  return new Promise((resolve) => {
    const url = new URL(request.url);
    const client = url.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (result: DispatchResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = client.request(url, {
      method: request.method,
      headers: request.body === undefined ? request.headers : { ...request.headers, 'content-length': Buffer.byteLength(request.body).toString() },
      agent: agents[url.protocol as 'http:' | 'https:'],
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ kind: 'lost', error: `timeout after ${request.timeoutMs} ms`, latencyMs: elapsed() });
    }, request.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOTFOUND') finish({ kind: 'not-sent', error: error.code, latencyMs: elapsed() });
      else finish({ kind: 'lost', error: error.code ?? error.message, latencyMs: elapsed() });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (error: NodeJS.ErrnoException) => finish({ kind: 'lost', error: `response broken: ${error.code ?? error.message}`, latencyMs: elapsed() }));
      res.on('aborted', () => finish({ kind: 'lost', error: 'response aborted', latencyMs: elapsed() }));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON: keep the text */
        }
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        finish({ kind: 'response', status: res.statusCode ?? 0, headers, body, latencyMs: elapsed() });
      });
    });
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });
}
