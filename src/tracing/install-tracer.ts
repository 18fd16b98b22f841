import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { TracerProvider } from '@opentelemetry/sdk-trace';
import { useTracer } from './tracer.js';

export const TRACER_NAME = 'effectd';

/**
 * Makes `provider` the process's tracer provider: AsyncLocalStorage carries the active span
 * across awaits, W3C trace context is the global propagator, and effectd's spans switch on.
 * Returns the undo (for tests that install a provider of their own and must leave none behind).
 */
export function installTracerProvider(provider: TracerProvider, version?: string): () => void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  useTracer(provider.getTracer(TRACER_NAME, version));
  return () => {
    useTracer(undefined);
    trace.disable();
    propagation.disable();
    context.disable();
  };
}
