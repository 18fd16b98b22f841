import type { CanonicalArgs } from '../../../../src/core/arg-fields.js';
import { readPath } from '../../../../src/core/classify.js';
import { buildRequest } from '../../../../src/providers/http-provider.js';
import type { Tool } from '../../../../src/providers/tool-registry.js';
import type { Exchange } from '../bench-http.js';
import type { Observation, Send } from './policy.js';

const AMBIGUOUS_4XX = new Set([408, 409, 429]);

/**
 * One request from a baseline straight to the provider, shaped exactly as effectd shapes it (same
 * contract, same canonical arguments), with the key the policy chose (or none).
 */
export async function providerRequest(tool: Tool, args: Record<string, unknown>, key: string | null, send: Send, signal: AbortSignal): Promise<Exchange> {
  const parsed = tool.schema.safeParse(args);
  if (!parsed.success) return { kind: 'response', status: 400, headers: {}, body: { error: `invalid arguments for ${tool.name}: ${parsed.error.issues.map((i) => i.message).join('; ')}` }, ms: 0 };
  const request = buildRequest(tool, { args: parsed.data as CanonicalArgs, providerKey: key, reference: '' });
  return send({ method: request.method, url: request.url, headers: request.headers, body: request.body, timeoutMs: request.timeoutMs, signal });
}

/** What the model reads from a raw exchange: the provider's own words, no ledger behind them. */
export function observe(tool: Tool, result: Exchange): Observation {
  switch (result.kind) {
    case 'cancelled':
      return { kind: 'error', ambiguous: true, text: 'the request was cancelled before an answer came back' };
    case 'not-sent':
      return { kind: 'error', ambiguous: false, text: `could not connect to the provider (${result.error})` };
    case 'lost':
      return { kind: 'error', ambiguous: true, text: `no answer from the provider: ${result.error}` };
    case 'response': {
      const summary = summarize(result.body);
      if (result.status >= 200 && result.status < 300) return { kind: 'done', receipt: receiptOf(tool, result.body), text: `HTTP ${result.status}: ${summary}` };
      const ambiguous = result.status >= 500 || AMBIGUOUS_4XX.has(result.status) || result.status < 200;
      return { kind: 'error', ambiguous, text: `HTTP ${result.status}: ${summary}` };
    }
  }
}

/** The provider's id for what it created; the journal's file:line for the keyless append tool. */
export function receiptOf(tool: Tool, body: unknown): string | undefined {
  if (tool.spec.receiptPath) {
    const value = readPath(body, tool.spec.receiptPath);
    return value === undefined ? undefined : String(value);
  }
  const file = readPath(body, 'file');
  const line = readPath(body, 'lineNumber');
  return file !== undefined && line !== undefined ? `${String(file)}:${String(line)}` : undefined;
}

/** Whether the tool lets the caller send an idempotency key at all. */
export function offersKey(tool: Tool): boolean {
  return tool.spec.idempotency.kind !== 'none';
}

function summarize(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}
