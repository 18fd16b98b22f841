/**
 * Whether this process exports traces, as the settings decided it: src/config/settings-loader.ts
 * makes it from the standard OpenTelemetry variables (off unless an OTLP endpoint is set or
 * OTEL_TRACES_EXPORTER=otlp; OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true turn it off),
 * src/tracing/start-tracing.ts acts on it. Here, in the leaf both layers may import.
 */
export type TracingSettings =
  | { readonly kind: 'off' }
  | {
    readonly kind: 'otlp';
    readonly serviceName: string;
    /** Where spans go, for the start-up line: scheme, host and path only (no credentials, no query). */
    readonly endpoint: string;
    /** Set when the environment asked for http/protobuf: effectd's exporter sends OTLP/HTTP JSON, which OTLP receivers accept on the same path. */
    readonly note?: string;
    /** The batch processor's OTEL_BSP_* settings that were given (the SDK's defaults otherwise). */
    readonly batch: BatchSettings;
  };

export interface BatchSettings {
  scheduledDelayMillis?: number;
  maxQueueSize?: number;
  maxExportBatchSize?: number;
  exportTimeoutMillis?: number;
}
