import { describe, expect, it } from 'vitest';
import { redactDiag } from '../../src/tracing/diag-redaction.js';
import { loadSettings } from '../../src/config/settings-loader.js';

/** What the settings loader makes of the OTEL_* variables (src/config/settings-loader.ts). */
const tracingSettings = (env: Record<string, string>) => loadSettings(env).tracing;

describe('whether effectd exports traces (the standard OTEL_* environment)', () => {
  it('is off when nothing asks for it, and when OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true says so', () => {
    expect(tracingSettings({})).toEqual({ kind: 'off' });
    expect(tracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc' })).toEqual({ kind: 'off' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toEqual({ kind: 'off' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toEqual({ kind: 'off' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toEqual({ kind: 'off' });
  });

  it('exports over OTLP/HTTP when an endpoint is set or OTEL_TRACES_EXPORTER=otlp, as service effectd unless OTEL_SERVICE_NAME says otherwise', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({ kind: 'otlp', serviceName: 'effectd', endpoint: 'http://collector:4318/v1/traces', batch: {} });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example/custom/path', OTEL_SERVICE_NAME: 'payments-gateway' }))
      .toEqual({ kind: 'otlp', serviceName: 'payments-gateway', endpoint: 'https://otel.example/custom/path', batch: {} });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ kind: 'otlp', serviceName: 'effectd', endpoint: 'http://localhost:4318/v1/traces', batch: {} });
  });

  it('never repeats credentials or a query of the endpoint in what it prints', () => {
    const settings = tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:s3cret@otel.example:4318/v1/traces?api_key=k3y' });
    expect(settings).toMatchObject({ kind: 'otlp', endpoint: 'https://otel.example:4318/v1/traces' });
    expect(JSON.stringify(settings)).not.toMatch(/s3cret|k3y/);
  });

  it('honours the batch processor\'s OTEL_BSP_* settings, refusing values that are not positive whole numbers', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(tracingSettings({ ...on, OTEL_BSP_SCHEDULE_DELAY: '1000', OTEL_BSP_MAX_QUEUE_SIZE: '4096', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '256', OTEL_BSP_EXPORT_TIMEOUT: '10000' }))
      .toMatchObject({ batch: { scheduledDelayMillis: 1000, maxQueueSize: 4096, maxExportBatchSize: 256, exportTimeoutMillis: 10000 } });
    expect(() => tracingSettings({ ...on, OTEL_BSP_SCHEDULE_DELAY: '5s' })).toThrow(/OTEL_BSP_SCHEDULE_DELAY must be a positive whole number, not "5s"/);
    expect(() => tracingSettings({ ...on, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4096' })).toThrow(/must not exceed OTEL_BSP_MAX_QUEUE_SIZE/);
  });

  it('accepts http/protobuf (sent as JSON, with a note) and refuses what it cannot do, saying what to set', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toMatchObject({ kind: 'otlp', note: expect.stringContaining('OTLP/HTTP JSON') });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).not.toHaveProperty('note');
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc: .*HTTP port \(4318/);
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER must be otlp or none: effectd exports traces over OTLP\/HTTP only.*, not "zipkin"/);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL \(e\.g\. http:\/\/localhost:4318\), not "not a url"/);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/must be an http:\/\/ or https:\/\/ URL/);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://c/v1/traces' })).toThrow(/must be an http:\/\/ or https:\/\/ URL/);
  });
});

describe('what the OpenTelemetry SDK says about itself, as effectd logs it', () => {
  it('keeps the trouble and drops header values, URL credentials and queries', () => {
    expect(redactDiag('Header "x-api-key" has invalid value (k3y-v4lue\n) and will be ignored')).toBe('Header "x-api-key" has invalid value and will be ignored');
    expect(redactDiag("Configuration: Could not parse environment-provided export URL: 'https://u:s3cret@otel.example/v1/traces?api_key=abc', falling back to undefined"))
      .toBe("Configuration: Could not parse environment-provided export URL: 'https://otel.example/v1/traces?…', falling back to undefined");
    expect(redactDiag('export request failure (error: Error: connect ECONNREFUSED 127.0.0.1:4318)')).toBe('export request failure (error: Error: connect ECONNREFUSED 127.0.0.1:4318)');
  });
});
