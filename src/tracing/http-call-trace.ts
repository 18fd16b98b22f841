import { trace } from '@opentelemetry/api';
import type { DispatchResult } from '../core/dispatch-result.js';
import { ATTR } from './span-names.js';
import { injectTrace } from './trace-context.js';
import { tracingOn } from './tracer.js';

/** What an HTTP exchange sends with tracing on: its headers plus `traceparent`, and how to note the answer on the span. */
export interface HttpCallTrace {
  headers: Record<string, string>;
  done(result: DispatchResult): void;
}

/**
 * An outgoing provider request as part of the active span (an attempt or a reconciliation
 * check): the span gets the HTTP client attributes that are safe to export (method, scheme, host,
 * port, status), never the path or query (they carry arguments and references), headers or keys;
 * the request gets the span's `traceparent`. Undefined with tracing off.
 */
export function traceHttpCall(url: URL, method: string, headers: Record<string, string>): HttpCallTrace | undefined {
  if (!tracingOn()) return undefined;
  const span = trace.getActiveSpan();
  const traced = { ...headers };
  injectTrace(traced);
  span?.setAttributes(httpClientAttributes(url, method));
  return {
    headers: traced,
    done: (result) => span?.setAttributes(httpResultAttributes(result)),
  };
}

export function httpClientAttributes(url: URL, method: string): Record<string, string | number> {
  const scheme = url.protocol.replace(/:$/, '');
  return {
    [ATTR.httpMethod]: method.toUpperCase(),
    [ATTR.urlScheme]: scheme,
    [ATTR.serverAddress]: url.hostname,
    [ATTR.serverPort]: url.port ? Number(url.port) : scheme === 'https' ? 443 : 80,
  };
}

/** The status, or for a request without an answer a bounded `error.type`: an errno code, `timeout`, or `lost`. */
export function httpResultAttributes(result: DispatchResult): Record<string, string | number> {
  if (result.kind === 'response') return { [ATTR.httpStatus]: result.status, ...(result.status >= 400 ? { [ATTR.errorType]: String(result.status) } : {}) };
  const code = /^E[A-Z_]+$/.test(result.error) ? result.error : result.error.startsWith('timeout') ? 'timeout' : result.kind === 'not-sent' ? 'not_sent' : 'lost';
  return { [ATTR.errorType]: code };
}
