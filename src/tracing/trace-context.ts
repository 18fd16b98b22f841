import { context, defaultTextMapSetter, ROOT_CONTEXT, trace, type Context, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { tracingOn } from './tracer.js';

/**
 * W3C trace context (`traceparent`, `tracestate`) in and out of effectd: taken from what a front
 * door received (HTTP headers, Kafka headers, MCP `params._meta`) and sent on to the provider.
 * Always W3C, whatever global propagator another library installed. With tracing off every
 * function here returns at once: nothing is read, nothing is sent.
 */
const w3c = new W3CTraceContextPropagator();

/** HTTP headers (`string | string[]`), Kafka headers (`Buffer | string | (Buffer | string)[]`) or an MCP `_meta` object. */
export type TraceCarrier = Readonly<Record<string, unknown>>;

function text(value: unknown): string | undefined {
  if (Array.isArray(value)) return text(value[0]);
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

const getter: TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => text(carrier[key]),
};

function isCarrier(value: unknown): value is TraceCarrier {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Runs `work` as part of the caller's trace, when the carrier has a valid `traceparent`; an
 * invalid or absent one is ignored (the command starts a trace of its own), never refused.
 */
export function withTraceFrom<T>(carrier: unknown, work: () => T): T {
  if (!tracingOn() || !isCarrier(carrier)) return work();
  return context.with(w3c.extract(context.active(), carrier, getter), work);
}

/**
 * Runs `work` in the trace a command names in its own `trace` field (the wire's TraceContext, which
 * effectd's SDK sets), unless its transport already carried one: a header wins over the body.
 */
export function withCommandTrace<T>(command: unknown, work: () => T): T {
  if (!tracingOn() || !isCarrier(command) || trace.getSpanContext(context.active()) !== undefined) return work();
  return withTraceFrom(command.trace, work);
}

/** Adds `traceparent` (and `tracestate`) of the active span to outgoing headers or an MCP `_meta`. */
export function injectTrace(carrier: Record<string, unknown>): void {
  if (!tracingOn()) return;
  w3c.inject(context.active(), carrier, defaultTextMapSetter);
}

/** The active span's `traceparent`, to store with an effect so later work (reconciliation) joins its trace. */
export function currentTraceparent(): string | undefined {
  if (!tracingOn()) return undefined;
  const carrier: Record<string, string> = {};
  w3c.inject(context.active(), carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/** The context of a stored `traceparent` (undefined when there is none, or it is not valid). */
export function storedTrace(traceparent: string | undefined): Context | undefined {
  if (!tracingOn() || traceparent === undefined) return undefined;
  const extracted = w3c.extract(ROOT_CONTEXT, { traceparent }, getter);
  return extracted === ROOT_CONTEXT ? undefined : extracted;
}

/** Runs background work for an effect (a scheduled reconciliation step) in the trace of the command that declared it. */
export function withStoredTrace<T>(traceparent: string | undefined, work: () => T): T {
  const stored = storedTrace(traceparent);
  return stored ? context.with(stored, work) : work();
}
