import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import type { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { EffectdError } from '../core/errors.js';
import { OTLP_TRACE_EXPORTER, requireWithOptional } from '../shared/optional-dependency.js';
import { packageRoot } from '../shared/package-root.js';
import { redactDiag } from './diag-redaction.js';
import { installTracerProvider } from './install-tracer.js';
import type { TracingSettings } from '../shared/tracing-settings.js';

/** A running trace export: what to print at start-up, and the flush a drain ends with. */
export interface TracingHandle {
  /** e.g. "traces: OTLP/HTTP to http://collector:4318/v1/traces as service effectd" */
  describe: string;
  /** Exports every span still queued, then stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Starts exporting traces when the settings ask for it (Settings.tracing): spans are
 * batched and sent over OTLP/HTTP (the exporter reads the standard OTEL_EXPORTER_OTLP_* variables
 * itself: endpoint, headers, timeout, compression). Undefined when not asked for: then no provider
 * is registered and effectd makes no spans at all.
 */
export function startTracing(settings: TracingSettings, warn: (line: string) => void): TracingHandle | undefined {
  if (settings.kind === 'off') return undefined;
  const Exporter = otlpTraceExporter();
  const version = packageVersion();
  // Export failures (a collector that is down) are worth a line, never a header's value or a URL's credentials.
  diag.setLogger({
    error: (message) => warn(`effectd tracing: ${redactDiag(message)}`),
    warn: (message) => warn(`effectd tracing: ${redactDiag(message)}`),
    info: () => {}, debug: () => {}, verbose: () => {},
  }, DiagLogLevel.WARN);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, ...(version ? { [ATTR_SERVICE_VERSION]: version } : {}) }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new Exporter(), ...settings.batch })],
  });
  const uninstall = installTracerProvider(provider, version);
  return {
    describe: `traces: OTLP/HTTP to ${settings.endpoint} as service ${settings.serviceName}${settings.note ? ` (${settings.note})` : ''}`,
    // Spans that cannot be exported at shutdown are lost, nothing else: the drain still ends well.
    shutdown: async () => {
      try {
        await provider.shutdown();
      } catch (error) {
        warn(`effectd tracing: spans not exported at shutdown (${redactDiag((error as Error).message)}); effects are not affected`);
      } finally {
        uninstall();
      }
    },
  };
}

/**
 * The OTLP/HTTP exporter, an optional dependency (only trace export needs it, and it brings the
 * protobuf runtime): required synchronously (it ships CommonJS), so starting tracing stays synchronous.
 */
export function otlpTraceExporter(load: () => unknown = () => createRequire(import.meta.url)(OTLP_TRACE_EXPORTER.name)): typeof OTLPTraceExporter {
  const missing = (message: string): never => {
    throw new EffectdError('invalid_config', message);
  };
  return requireWithOptional(OTLP_TRACE_EXPORTER, () => (load() as { OTLPTraceExporter: typeof OTLPTraceExporter }).OTLPTraceExporter, missing);
}

function packageVersion(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}
