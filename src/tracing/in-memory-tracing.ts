import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { installTracerProvider } from './install-tracer.js';

/** Tracing to memory, in this process: what a test reads its spans from. */
export interface InMemoryTracing {
  /** Every span ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  reset(): void;
  /** Stops tracing and removes the provider (effectd makes no spans afterwards). */
  uninstall(): Promise<void>;
}

/** Installs a tracer provider that hands each span to an in-memory exporter as soon as it ends. */
export function installInMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const uninstall = installTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    uninstall: async () => {
      await provider.shutdown();
      uninstall();
    },
  };
}
