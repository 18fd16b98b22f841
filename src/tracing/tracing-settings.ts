import { EffectdError } from '../core/errors.js';
/**
 * Whether this process exports traces, from the standard OpenTelemetry environment variables
 * (the one place that decides it). Off unless asked for: an OTLP endpoint is set
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp.
 * OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true turn it off whatever else is set.
 */
export type TracingSettings =
  | { kind: 'off' }
  | {
    kind: 'otlp';
    serviceName: string;
    /** Where spans go, for the start-up line: scheme, host and path only (no credentials, no query). */
    endpoint: string;
    /** Set when the environment asked for http/protobuf: effectd's exporter sends OTLP/HTTP JSON, which OTLP receivers accept on the same path. */
    note?: string;
    /** The batch processor's OTEL_BSP_* settings that were given (the SDK's defaults otherwise). */
    batch: BatchSettings;
  };

export interface BatchSettings {
  scheduledDelayMillis?: number;
  maxQueueSize?: number;
  maxExportBatchSize?: number;
  exportTimeoutMillis?: number;
}

const BATCH_ENV: Record<keyof BatchSettings, string> = {
  scheduledDelayMillis: 'OTEL_BSP_SCHEDULE_DELAY',
  maxQueueSize: 'OTEL_BSP_MAX_QUEUE_SIZE',
  maxExportBatchSize: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  exportTimeoutMillis: 'OTEL_BSP_EXPORT_TIMEOUT',
};

export const DEFAULT_SERVICE_NAME = 'effectd';
const DEFAULT_ENDPOINT = 'http://localhost:4318/v1/traces';

export function tracingSettings(env: Readonly<Record<string, string | undefined>>): TracingSettings {
  const value = (name: string) => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return { kind: 'off' };
  const exporters = value('OTEL_TRACES_EXPORTER')?.split(',').map((e) => e.trim().toLowerCase()).filter(Boolean);
  const unsupported = exporters?.filter((e) => e !== 'otlp' && e !== 'none') ?? [];
  if (unsupported.length > 0) throw new EffectdError('invalid_config', `OTEL_TRACES_EXPORTER=${value('OTEL_TRACES_EXPORTER')}: effectd exports traces over OTLP/HTTP only; set it to otlp (or none, or leave it unset and set OTEL_EXPORTER_OTLP_ENDPOINT)`);
  if (exporters?.includes('none')) return { kind: 'off' };
  const specific = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const general = value('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!exporters?.includes('otlp') && specific === undefined && general === undefined) return { kind: 'off' };

  const protocolVar = value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = value(protocolVar)?.toLowerCase();
  if (protocol !== undefined && protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw new EffectdError('invalid_config', `${protocolVar}=${protocol}: effectd exports traces over OTLP/HTTP (http/json); point OTEL_EXPORTER_OTLP_ENDPOINT at the receiver's HTTP port (4318 by default), not its gRPC port`);
  }
  // The exporter resolves the endpoint the same way (a traces endpoint as is, a general one + /v1/traces).
  const endpoint = specific ?? (general !== undefined ? `${general.replace(/\/+$/, '')}/v1/traces` : DEFAULT_ENDPOINT);
  const which = specific !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch (error) {
    throw new EffectdError('invalid_config', `${which} is not a URL (expected e.g. http://localhost:4318)`, {}, { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EffectdError('invalid_config', `${which} must be an http:// or https:// URL, not ${url.protocol}`);
  const batch: BatchSettings = {};
  for (const [field, name] of Object.entries(BATCH_ENV) as [keyof BatchSettings, string][]) {
    const raw = value(name);
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n <= 0) throw new EffectdError('invalid_config', `${name} must be a positive whole number, not "${raw}"`);
    batch[field] = n;
  }
  if ((batch.maxExportBatchSize ?? 512) > (batch.maxQueueSize ?? 2048)) throw new EffectdError('invalid_config', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not exceed OTEL_BSP_MAX_QUEUE_SIZE (2048 by default)');
  return {
    kind: 'otlp',
    serviceName: value('OTEL_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME,
    batch,
    endpoint: `${url.protocol}//${url.host}${url.pathname}`,
    ...(protocol === 'http/protobuf' ? { note: `${protocolVar}=http/protobuf: spans are sent as OTLP/HTTP JSON, which OTLP receivers accept on the same path` } : {}),
  };
}
