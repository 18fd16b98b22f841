// What the rest of effectd uses to trace (the set-up, start-tracing.ts, is imported by the start command only).
export { ATTR, SPAN } from './span-names.js';
export { inSpan, SpanKind, tracingOn, type Span } from './tracer.js';
export { currentTraceparent, injectTrace, withCommandTrace, withStoredTrace, withTraceFrom } from './trace-context.js';
export { traceHttpCall } from './http-call-trace.js';
export * from './effect-attributes.js';
