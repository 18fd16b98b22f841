import { z } from 'zod';
import { DEFAULT_ANSWER_BUDGET, type AnswerBudgetSettings } from '../core/answer-budget.js';
import { EffectdError } from '../core/errors.js';
import type { TracingSettings } from '../shared/tracing-settings.js';
import { FLAG_SETTINGS, PROVIDER_URL_SETTING, SETTINGS, type SettingFlags, type SettingName, type SettingSpec, type SettingValues } from './settings.js';

export type { TracingSettings } from '../shared/tracing-settings.js';

/**
 * The service's settings, loaded once by loadSettings and passed down, frozen. Each field names the
 * variable it comes from; meaning, default and unit are in the table (src/config/settings.ts).
 */
export interface Settings {
  /** EFFECTD_DATA_DIR / --data-dir; undefined: the command's own default. */
  readonly dataDir: string | undefined;
  readonly ledger: {
    /** EFFECTD_LEDGER / --ledger; undefined: sqlite: in the data dir. */
    readonly url: string | undefined;
    readonly encoding: 'compact' | 'verbatim';
    readonly compression: 'none' | 'deflate';
    /** EFFECTD_LEDGER_CONNECT_TIMEOUT_MS and EFFECTD_LEDGER_QUERY_TIMEOUT_MS (PostgreSQL). */
    readonly timeouts: { readonly connectMs: number; readonly queryMs: number };
  };
  /** EFFECTD_CONFIG / --config. */
  readonly configFile: string | undefined;
  /** EFFECTD_SECRET, as given (loadSecret checks it); undefined: the data dir's. */
  readonly secret: string | undefined;
  /** EFFECTD_CREDENTIALS; undefined: the data dir's credentials.json. */
  readonly credentialsFile: string | undefined;
  /** EFFECTD_URL / --url, without a trailing slash. */
  readonly url: string;
  /** EFFECTD_TOKEN / --token. */
  readonly token: string | undefined;
  /** EFFECTD_WORKERS / --workers. */
  readonly workers: number | 'auto';
  /** EFFECTD_WORKER: this process's worker number, set by the primary. */
  readonly worker: number | undefined;
  readonly recentEffects: number;
  readonly workflowCacheEffects: number;
  readonly drainTimeoutMs: number;
  readonly http: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    readonly maxConnections: number;
    /** EFFECTD_BODY_LIMIT_BYTES: the largest request body, on /v1 and /mcp alike. */
    readonly bodyLimitBytes: number;
  };
  readonly kafka: {
    /** EFFECTD_KAFKA_GROUP / --group. */
    readonly groupId: string;
    readonly topics: { readonly commands: string; readonly outcomes: string; readonly deadLetters: string };
    readonly maxInFlight: number;
    readonly partitionsConcurrently: number;
    readonly sessionTimeoutMs: number;
    /** EFFECTD_KAFKA_LEDGER_OUTAGE_MS. */
    readonly ledgerOutageMs: number;
    /** EFFECTD_BODY_LIMIT_BYTES: the largest command message (the same limit as an HTTP body). */
    readonly maxCommandBytes: number;
  };
  readonly answerBudget: Readonly<AnswerBudgetSettings>;
  readonly log: {
    /** undefined: the command's default (info, or warn for an embedded runtime). */
    readonly level: SettingValues['EFFECTD_LOG_LEVEL'];
    /** undefined: pretty on a terminal, JSON lines otherwise. */
    readonly format: SettingValues['EFFECTD_LOG_FORMAT'];
  };
  /** EFFECTD_MCP_IDENTITY_FALLBACK, EFFECTD_MCP_IDENTITY_WINDOW_MS: the identity of an MCP call without `_meta` identity (the CLI's flags win). */
  readonly mcpIdentity: { readonly fallback: 'content' | 'header' | 'off'; readonly windowMs: number };
  /** EFFECTD_PROVIDER_<NAME>_URL overrides, by variable (the config loader matches them to providers). */
  readonly providerUrls: Readonly<Record<string, string>>;
  readonly tracing: TracingSettings;
}

export type Environment = Readonly<Record<string, string | undefined>>;

const blank = (value: unknown): boolean => value === undefined || (typeof value === 'string' && value.trim() === '');

function field(spec: SettingSpec<unknown>): z.ZodType {
  return z.preprocess((value) => (blank(value) ? spec.default : value), 'default' in spec ? spec.schema : spec.schema.optional());
}

/** Marks an issue of a rule between variables, whose message is complete as it stands. */
const BETWEEN = { between: true };

/** The one schema: every variable of the table, then the rules between them. */
export const settingsSchema = z.object(Object.fromEntries(Object.entries(SETTINGS).map(([name, spec]) => [name, field(spec)])) as Record<SettingName, z.ZodType>)
  .superRefine((v, ctx) => {
    const values = v as SettingValues;
    if (values.EFFECTD_HTTP_HEADERS_TIMEOUT_MS > values.EFFECTD_HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', params: BETWEEN, path: ['EFFECTD_HTTP_HEADERS_TIMEOUT_MS'], message: `EFFECTD_HTTP_HEADERS_TIMEOUT_MS (${values.EFFECTD_HTTP_HEADERS_TIMEOUT_MS}) must not exceed EFFECTD_HTTP_REQUEST_TIMEOUT_MS (${values.EFFECTD_HTTP_REQUEST_TIMEOUT_MS}): the request timeout covers the headers too` });
    }
    if (values.EFFECTD_ANSWER_BUDGET_MS !== undefined && values.EFFECTD_ANSWER_BUDGET_MS > values.EFFECTD_ANSWER_BUDGET_MAX_MS) {
      ctx.addIssue({ code: 'custom', params: BETWEEN, path: ['EFFECTD_ANSWER_BUDGET_MS'], message: `EFFECTD_ANSWER_BUDGET_MS (${values.EFFECTD_ANSWER_BUDGET_MS}) is above EFFECTD_ANSWER_BUDGET_MAX_MS (${values.EFFECTD_ANSWER_BUDGET_MAX_MS}): the default answer budget cannot exceed the cap callers are held to` });
    }
    if ((values.OTEL_BSP_MAX_EXPORT_BATCH_SIZE ?? 512) > (values.OTEL_BSP_MAX_QUEUE_SIZE ?? 2048)) {
      ctx.addIssue({ code: 'custom', params: BETWEEN, path: ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE'], message: `OTEL_BSP_MAX_EXPORT_BATCH_SIZE (${values.OTEL_BSP_MAX_EXPORT_BATCH_SIZE ?? 512}) must not exceed OTEL_BSP_MAX_QUEUE_SIZE (${values.OTEL_BSP_MAX_QUEUE_SIZE ?? '2048 by default'})` });
    }
  });

/**
 * The settings of this process: from the environment, with the CLI flags that set the same things
 * winning over their variables. Every value is checked here, once: one that effectd cannot use
 * stops it with an EffectdError('invalid_config') naming the variable (or flag), what was given and
 * what is expected; several at once are listed together.
 */
export function loadSettings(env: Environment, flags: SettingFlags = {}): Settings {
  const input: Record<string, string | undefined> = {};
  const givenBy = new Map<string, string>();
  for (const name of Object.keys(SETTINGS)) {
    input[name] = env[name];
    givenBy.set(name, name);
  }
  for (const [key, value] of Object.entries(flags) as [keyof SettingFlags, string | boolean | undefined][]) {
    if (value === undefined || value === false) continue;
    const { variable, flag } = FLAG_SETTINGS[key];
    if (value === true) throw new EffectdError('invalid_config', `${flag} needs a value`, { flag });
    input[variable] = value;
    givenBy.set(variable, flag);
  }
  const problems: { variable: string; message: string }[] = [];
  const parsed = settingsSchema.safeParse(input);
  if (!parsed.success) {
    const seen = new Set<string>();
    for (const issue of parsed.error.issues) {
      const variable = String(issue.path[0]);
      if (seen.has(variable)) continue;
      seen.add(variable);
      const spec: SettingSpec<unknown> | undefined = (SETTINGS as Record<string, SettingSpec<unknown>>)[variable];
      if ((issue.code === 'custom' && issue.params === BETWEEN) || !spec) problems.push({ variable, message: issue.message });
      else problems.push({ variable, message: `${givenBy.get(variable)} must be ${spec.expected}, not ${spec.secret ? 'the value given' : `"${input[variable]}"`}` });
    }
  }
  const providerUrls: Record<string, string> = {};
  for (const [variable, value] of Object.entries(env)) {
    if (!PROVIDER_URL_SETTING.pattern.test(variable) || value === undefined || blank(value)) continue;
    if (PROVIDER_URL_SETTING.schema.safeParse(value).success) providerUrls[variable] = value;
    else problems.push({ variable, message: `${variable} must be ${PROVIDER_URL_SETTING.expected}, not "${value}"` });
  }
  if (!parsed.success || problems.length > 0) throw invalid(problems);
  const values = parsed.data as SettingValues;
  const tracing = tracingOf(values, problems);
  if (problems.length > 0) throw invalid(problems);
  return deepFreeze<Settings>({
    dataDir: values.EFFECTD_DATA_DIR,
    ledger: { url: values.EFFECTD_LEDGER, encoding: values.EFFECTD_LEDGER_ENCODING, compression: values.EFFECTD_LEDGER_COMPRESSION, timeouts: { connectMs: values.EFFECTD_LEDGER_CONNECT_TIMEOUT_MS, queryMs: values.EFFECTD_LEDGER_QUERY_TIMEOUT_MS } },
    configFile: values.EFFECTD_CONFIG,
    secret: values.EFFECTD_SECRET,
    credentialsFile: values.EFFECTD_CREDENTIALS,
    url: values.EFFECTD_URL,
    token: values.EFFECTD_TOKEN,
    workers: values.EFFECTD_WORKERS,
    worker: values.EFFECTD_WORKER,
    recentEffects: values.EFFECTD_RECENT_EFFECTS,
    workflowCacheEffects: values.EFFECTD_WORKFLOW_CACHE,
    drainTimeoutMs: values.EFFECTD_DRAIN_TIMEOUT_MS,
    http: {
      headersTimeoutMs: values.EFFECTD_HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: values.EFFECTD_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: values.EFFECTD_HTTP_KEEPALIVE_TIMEOUT_MS,
      maxConnections: values.EFFECTD_HTTP_MAX_CONNECTIONS,
      bodyLimitBytes: values.EFFECTD_BODY_LIMIT_BYTES,
    },
    kafka: {
      groupId: values.EFFECTD_KAFKA_GROUP,
      topics: { commands: values.EFFECTD_KAFKA_COMMANDS_TOPIC, outcomes: values.EFFECTD_KAFKA_OUTCOMES_TOPIC, deadLetters: values.EFFECTD_KAFKA_DLQ_TOPIC },
      maxInFlight: values.EFFECTD_KAFKA_MAX_IN_FLIGHT,
      partitionsConcurrently: values.EFFECTD_KAFKA_PARTITIONS_CONCURRENTLY,
      sessionTimeoutMs: values.EFFECTD_KAFKA_SESSION_TIMEOUT_MS,
      ledgerOutageMs: values.EFFECTD_KAFKA_LEDGER_OUTAGE_MS,
      maxCommandBytes: values.EFFECTD_BODY_LIMIT_BYTES,
    },
    answerBudget: { maxMs: values.EFFECTD_ANSWER_BUDGET_MAX_MS, defaultMs: values.EFFECTD_ANSWER_BUDGET_MS ?? Math.min(DEFAULT_ANSWER_BUDGET.defaultMs, values.EFFECTD_ANSWER_BUDGET_MAX_MS) },
    log: { level: values.EFFECTD_LOG_LEVEL, format: values.EFFECTD_LOG_FORMAT },
    mcpIdentity: { fallback: values.EFFECTD_MCP_IDENTITY_FALLBACK, windowMs: values.EFFECTD_MCP_IDENTITY_WINDOW_MS },
    providerUrls,
    tracing,
  });
}

function invalid(problems: { variable: string; message: string }[]): EffectdError {
  const message = problems.length === 1 ? problems[0]!.message : `${problems.length} settings effectd cannot use:\n${problems.map((p) => `  - ${p.message}`).join('\n')}`;
  return new EffectdError('invalid_config', message, { variable: problems[0]?.variable, variables: problems.map((p) => p.variable) });
}

const DEFAULT_TRACES_ENDPOINT = 'http://localhost:4318/v1/traces';

/**
 * Whether traces are exported, and where. Off unless asked for: an OTLP endpoint is set, or
 * OTEL_TRACES_EXPORTER=otlp. OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true turn it off
 * whatever else is set. The exporter resolves the endpoint the same way.
 */
function tracingOf(v: SettingValues, problems: { variable: string; message: string }[]): TracingSettings {
  const fail = (variable: string, message: string): TracingSettings => {
    problems.push({ variable, message });
    return { kind: 'off' };
  };
  if (v.OTEL_SDK_DISABLED) return { kind: 'off' };
  const exporters = v.OTEL_TRACES_EXPORTER;
  if (exporters?.includes('none')) return { kind: 'off' };
  const specific = v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const general = v.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!exporters?.includes('otlp') && specific === undefined && general === undefined) return { kind: 'off' };
  const protocolVar = v.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = v.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? v.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    return fail(protocolVar, `${protocolVar}=${protocol}: effectd exports traces over OTLP/HTTP (http/json or http/protobuf); point OTEL_EXPORTER_OTLP_ENDPOINT at the receiver's HTTP port (4318 by default), not its gRPC port`);
  }
  const endpoint = specific ?? (general !== undefined ? `${general.replace(/\/+$/, '')}/v1/traces` : DEFAULT_TRACES_ENDPOINT);
  const which = specific !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  if (!URL.canParse(endpoint)) return fail(which, `${which} must be an http(s) URL (e.g. http://localhost:4318), not "${specific ?? general}"`);
  const url = new URL(endpoint);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(which, `${which} must be an http:// or https:// URL, not ${url.protocol}`);
  const batch = Object.fromEntries(Object.entries({
    scheduledDelayMillis: v.OTEL_BSP_SCHEDULE_DELAY,
    maxQueueSize: v.OTEL_BSP_MAX_QUEUE_SIZE,
    maxExportBatchSize: v.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    exportTimeoutMillis: v.OTEL_BSP_EXPORT_TIMEOUT,
  }).filter(([, value]) => value !== undefined));
  return {
    kind: 'otlp',
    serviceName: v.OTEL_SERVICE_NAME,
    batch,
    endpoint: `${url.protocol}//${url.host}${url.pathname}`,
    ...(protocol === 'http/protobuf' ? { note: `${protocolVar}=http/protobuf: spans are sent as OTLP/HTTP JSON, which OTLP receivers accept on the same path` } : {}),
  };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
