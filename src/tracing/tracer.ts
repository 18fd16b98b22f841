import { context, SpanKind, SpanStatusCode, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { asEffectdError, errorAction } from '../core/errors.js';
import { ATTR, type SpanName } from './span-names.js';

export { SpanKind };
export type { Span };

/**
 * The one switch: set when a tracer provider was installed (start-tracing.ts, or a test's
 * in-memory one), undefined otherwise. While it is undefined no span, context or attribute object
 * is made: the OpenTelemetry API's no-op tracer would still allocate a non-recording span per call.
 */
let active: Tracer | undefined;

export function useTracer(tracer: Tracer | undefined): void {
  active = tracer;
}

export function tracingOn(): boolean {
  return active !== undefined;
}

/**
 * Runs `work` in a new span `name`, a child of the active span (or of `parent`), and ends it when
 * `work` settles; a throw is recorded as `error.type` (the error's code, never its message, which
 * can quote arguments). With tracing off, `work` runs with no span. Attributes are set by `work`
 * through `span?.setAttributes(...)`, so nothing is built for them when tracing is off.
 */
export function inSpan<T>(name: SpanName, kind: SpanKind, work: (span: Span | undefined) => Promise<T>, parent?: Context): Promise<T> {
  const tracer = active;
  if (!tracer) return work(undefined);
  return tracer.startActiveSpan(name, { kind }, parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      const failure = asEffectdError(error);
      span.setAttribute(ATTR.errorType, failure.code);
      // A refused command (bad input, not allowed, a conflict) is the caller's, not a fault of effectd's.
      const action = errorAction(failure.code);
      if (action === 'retry_after' || action === 'terminal') span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
