import { z } from 'zod';
import { DEFAULT_ANSWER_BUDGET } from '../core/answer-budget.js';

/**
 * Every setting of the effectd service that comes from the environment (and the CLI flags that set
 * the same things): its variable, flag, type, default, unit and meaning, in this one table. The
 * loader (settings-loader.ts) parses the environment with it once, into a frozen `Settings` the
 * CLI passes down; `effectd config settings` and docs/configuration.md are generated from it.
 *
 * An entry's `schema` parses the variable's text; its `default` is text too, parsed by the same
 * schema, so the default the docs show is exactly what setting it would mean. A blank value counts
 * as unset.
 */
export interface SettingSpec<T> {
  /** The CLI flag that sets the same thing and wins over the variable, with the commands that take it. */
  flag?: string;
  /** The type as a reader should see it: "whole number", "URL", "path", "`compact` \| `verbatim`". */
  type: string;
  unit?: string;
  /** The default as text the schema parses; absent: no default (or one the command chooses, see defaultText). */
  default?: string;
  /** How the docs state the default when it is not simply `default` (a command's own, a derived one). */
  defaultText?: string;
  /** The meaning, in Markdown (links relative to docs/). */
  what: string;
  /** What a valid value looks like, for the error that names the variable: "<VAR> must be <expected>, not \"…\"". */
  expected: string;
  /** Never echoed in an error (a secret, a token). */
  secret?: boolean;
  /** Read by someone other than effectd's own code (the OTLP exporter): documented here, parsed there. */
  readBy?: string;
  schema: z.ZodType<T, string>;
}

/** Keeps an entry's own type (its schema's output, whether it has a default) for SettingValues. */
function setting<const S extends SettingSpec<unknown>>(spec: S): S {
  return spec;
}

const text = z.string();
const trimmed = z.string().trim().min(1);
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.string().trim().pipe(z.enum(values));
const httpUrl = z.string().refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol));
const POSITIVE = 'a positive whole number';

/** Levels a user may name in EFFECTD_LOG_LEVEL, most severe first; `silent` turns logging off (the logger takes exactly these). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The table, by variable. The order is the order of the reference (docs/configuration.md): where
 * things live, who may call, sizes and limits, Kafka, answers, logs, traces.
 */
export const SETTINGS = {
  EFFECTD_DATA_DIR: setting({
    flag: '`--data-dir` (start, mcp, effects, workflow, resolve)', type: 'path', schema: trimmed, expected: 'a directory',
    defaultText: '`./.effectd`; the operator commands: `./.effectd-dev` if it exists, else `./.effectd`',
    what: 'the embedded ledger, the secret, the credentials, projections. `effectd dev` (`./.effectd-dev`), `demo` (a fresh temporary directory) and `token` take only their `--data-dir`',
  }),
  EFFECTD_LEDGER: setting({
    flag: '`--ledger` (start, mcp)', type: 'ledger URL', schema: trimmed, expected: 'a ledger URL: sqlite:[path], postgres://… or kurrentdb://…',
    defaultText: '`sqlite:` (`<data-dir>/ledger.db`)',
    what: 'the ledger: `sqlite:/path`, `postgres://…`, `kurrentdb://…` ([ledgers.md](ledgers.md))',
  }),
  EFFECTD_CONFIG: setting({
    flag: '`--config` (start, dev, mcp)', type: 'path', schema: trimmed, expected: 'a config file',
    what: 'the config file: providers, tools, sagas ([above](#your-projects-config-module)); none: the built-in tools and sagas',
  }),
  EFFECTD_SECRET: setting({
    type: 'hex or base64', unit: 'bytes (≥ 32)', schema: trimmed, expected: 'hex or base64 of at least 32 bytes', secret: true,
    defaultText: '`<data-dir>/secret`, generated on first start',
    what: 'the server secret effect ids and provider keys derive from; instances of one deployment share it ([operations.md](operations.md#secrets-and-files))',
  }),
  EFFECTD_CREDENTIALS: setting({
    type: 'path', schema: trimmed, expected: 'a file',
    defaultText: '`<data-dir>/credentials.json`, created on first start',
    what: 'the credentials file; when set it must exist ([operations.md](operations.md#credentials))',
  }),
  EFFECTD_URL: setting({
    flag: '`--url` (effects, workflow, resolve)', type: 'URL', default: 'http://127.0.0.1:8080', schema: httpUrl.transform((url) => url.replace(/\/+$/, '')), expected: 'an http(s) URL, e.g. http://127.0.0.1:8080',
    what: 'the effectd the operator commands (`effects`, `workflow`, `resolve`) talk to',
  }),
  EFFECTD_TOKEN: setting({
    flag: '`--token` (effects, workflow, resolve, mcp)', type: 'string', schema: trimmed, expected: 'a token', secret: true,
    defaultText: 'from `<data-dir>/credentials.json`',
    what: 'the bearer token of those commands and of `effectd mcp` (embedded: act as that credential; `--url`: send it)',
  }),
  EFFECTD_WORKERS: setting({
    flag: '`--workers` (start)', type: 'whole number 1–256 or `auto`', unit: 'processes', default: '1',
    schema: z.union([z.literal('auto'), wholeNumber(1, 256)]), expected: 'a whole number from 1 to 256 or "auto" (one per core)',
    what: 'worker processes of `effectd start` sharing its port; PostgreSQL only ([operations.md](operations.md#both-cores-of-one-machine---workers-n))',
  }),
  EFFECTD_WORKER: setting({
    type: 'whole number', schema: wholeNumber(1), expected: POSITIVE,
    what: 'set by `effectd start --workers N` for each worker it forks (its number, 1…N); not for users',
  }),
  EFFECTD_RECENT_EFFECTS: setting({
    type: 'whole number', unit: 'effects', default: '10000', schema: wholeNumber(1), expected: POSITIVE,
    what: 'the recent window lists of settled effects are drawn from',
  }),
  EFFECTD_WORKFLOW_CACHE: setting({
    type: 'whole number', unit: 'effects', default: '20000', schema: wholeNumber(1), expected: POSITIVE,
    what: 'folded workflow states kept in memory, counted in effects ([architecture.md](architecture.md#one-gateway-three-front-doors))',
  }),
  EFFECTD_LEDGER_ENCODING: setting({
    type: '`compact` \\| `verbatim`', default: 'compact', schema: oneOf(['compact', 'verbatim']), expected: 'compact or verbatim (verbatim: each event as it is, one per row)',
    what: 'how new rows are written; `verbatim`: each event as it is, one row per event (PostgreSQL: jsonb readable with SQL, more WAL); every form is always read ([ledgers.md](ledgers.md#postgresql-storage))',
  }),
  EFFECTD_LEDGER_COMPRESSION: setting({
    type: '`none` \\| `deflate`', default: 'none', schema: oneOf(['none', 'deflate']), expected: 'deflate or none (deflate: less WAL per effect, more CPU)',
    what: 'PostgreSQL: `deflate` writes row bodies deflated with a dictionary — about 27% less WAL and table per effect, about a tenth more effectd CPU per effect ([ledgers.md](ledgers.md#postgresql-storage))',
  }),
  EFFECTD_LEDGER_CONNECT_TIMEOUT_MS: setting({
    type: 'whole number', unit: 'ms', default: '2000', schema: wholeNumber(1), expected: 'a positive whole number of milliseconds',
    what: 'PostgreSQL: how long a new connection (and a wait for a free one of the pool) may take before the ledger counts as unreachable and the command is answered 503 ([ledgers.md](ledgers.md#when-postgresql-cannot-be-reached))',
  }),
  EFFECTD_LEDGER_QUERY_TIMEOUT_MS: setting({
    type: 'whole number', unit: 'ms', default: '5000', schema: wholeNumber(1), expected: 'a positive whole number of milliseconds',
    what: 'PostgreSQL: how long one statement may take (client-side and as `statement_timeout`); past it the ledger counts as unreachable — a read is answered 503 at once, a write whose answer was lost 503 `unknown`: send the same command again',
  }),
  EFFECTD_DRAIN_TIMEOUT_MS: setting({
    type: 'whole number', unit: 'ms', default: '30000', schema: wholeNumber(1), expected: 'a positive whole number of milliseconds',
    what: 'how long SIGTERM/SIGINT drain before exiting ([operations.md](operations.md#signals))',
  }),
  EFFECTD_HTTP_HEADERS_TIMEOUT_MS: setting({
    type: 'whole number', unit: 'ms', default: '10000', schema: wholeNumber(1), expected: POSITIVE,
    what: 'time to receive a request\'s headers; at most the request timeout ([http-api.md](http-api.md#limits))',
  }),
  EFFECTD_HTTP_REQUEST_TIMEOUT_MS: setting({
    type: 'whole number', unit: 'ms', default: '30000', schema: wholeNumber(1), expected: POSITIVE,
    what: 'time to receive a whole request, headers and body',
  }),
  EFFECTD_HTTP_KEEPALIVE_TIMEOUT_MS: setting({
    type: 'whole number', unit: 'ms', default: '5000', schema: wholeNumber(1), expected: POSITIVE,
    what: 'how long an idle keep-alive connection stays open',
  }),
  EFFECTD_HTTP_MAX_CONNECTIONS: setting({
    type: 'whole number', unit: 'connections', default: '1024', schema: wholeNumber(1), expected: POSITIVE,
    what: 'open HTTP connections at most; more are refused',
  }),
  EFFECTD_BODY_LIMIT_BYTES: setting({
    type: 'whole number', unit: 'bytes', default: '1048576', schema: wholeNumber(1), expected: 'a positive whole number of bytes',
    what: 'the largest command any door takes: an HTTP request body (after gzip/deflate/br), a `/mcp` request, a Kafka command message; larger is refused (`413`; a Kafka dead letter `too_large`) and nothing is recorded ([http-api.md](http-api.md#limits))',
  }),
  EFFECTD_KAFKA_GROUP: setting({
    flag: '`--group` (start)', type: 'string', default: 'effectd', schema: trimmed, expected: 'a consumer group name',
    what: 'the consumer group every instance of one deployment joins, for the Kafka ingress of `effectd start --kafka BROKERS` ([kafka.md](kafka.md))',
  }),
  EFFECTD_KAFKA_COMMANDS_TOPIC: setting({
    type: 'topic', default: 'effectd.commands', schema: trimmed, expected: 'a topic name',
    what: 'where effect commands are consumed from',
  }),
  EFFECTD_KAFKA_OUTCOMES_TOPIC: setting({
    type: 'topic', default: 'effectd.outcomes', schema: trimmed, expected: 'a topic name',
    what: 'where outcomes go (unless a command names its `replyTopic`)',
  }),
  EFFECTD_KAFKA_DLQ_TOPIC: setting({
    type: 'topic', default: 'effectd.dlq', schema: trimmed, expected: 'a topic name',
    what: 'where commands effectd cannot read go (dead letters)',
  }),
  EFFECTD_KAFKA_MAX_IN_FLIGHT: setting({
    type: 'whole number', unit: 'commands', default: '256', schema: wholeNumber(1), expected: POSITIVE,
    what: 'commands one instance works on at once, across its partitions',
  }),
  EFFECTD_KAFKA_PARTITIONS_CONCURRENTLY: setting({
    type: 'whole number', unit: 'partitions', default: '6', schema: wholeNumber(1), expected: POSITIVE,
    what: 'partitions one instance consumes concurrently',
  }),
  EFFECTD_KAFKA_SESSION_TIMEOUT_MS: setting({
    type: 'whole number', unit: 'ms', default: '30000', schema: wholeNumber(1), expected: POSITIVE,
    what: 'how soon the group notices a dead instance and hands its partitions to the others (heartbeats every fifth of it, 100 ms–3 s)',
  }),
  EFFECTD_KAFKA_LEDGER_OUTAGE_MS: setting({
    type: 'whole number', unit: 'ms', default: '5000', schema: wholeNumber(1), expected: 'a positive whole number of milliseconds',
    what: 'how long the ledger may take no writes before this instance leaves the consumer group, so the other instances take its partitions (it stops fetching at once, and joins again when the ledger takes writes; [ledgers.md](ledgers.md#when-postgresql-cannot-be-reached))',
  }),
  EFFECTD_ANSWER_BUDGET_MS: setting({
    type: 'whole number', unit: 'ms', schema: wholeNumber(0), expected: 'a whole number of milliseconds ≥ 0 (0 answers at once after a lost reply, as before inline settle)',
    defaultText: `\`${DEFAULT_ANSWER_BUDGET.defaultMs}\` (at most the max)`,
    what: 'how long an answer may wait after a lost reply for the truth (inline settle), for tools whose contract sets no `answerBudgetMs` ([inline-settle.md](inline-settle.md#the-budget-and-how-to-set-it))',
  }),
  EFFECTD_ANSWER_BUDGET_MAX_MS: setting({
    type: 'whole number', unit: 'ms', default: String(DEFAULT_ANSWER_BUDGET.maxMs), schema: wholeNumber(0), expected: 'a whole number of milliseconds ≥ 0',
    what: 'the most a caller may ask for with `Prefer: wait`; the default budget may not exceed it',
  }),
  EFFECTD_MCP_IDENTITY_FALLBACK: setting({
    flag: '`--mcp-identity-fallback` (start, mcp; `dev` reads the variable)', type: '`content` \\| `header` \\| `off`', default: 'content', schema: oneOf(['content', 'header', 'off']), expected: 'content, header or off',
    what: 'the identity of an MCP call that carries no `dev.effectd/*` identity in `_meta` (Claude-style desktop clients): `content` derives it from the credential, a sliding window and the call\'s content, and adds the `effectd_repeat` argument a model fills for a deliberate repeat; `header` reads it from HTTP headers (`/mcp` only); `off` refuses the call ([mcp.md](mcp.md#calls-without-identity))',
  }),
  EFFECTD_MCP_IDENTITY_WINDOW_MS: setting({
    flag: '`--mcp-identity-window-ms` (start, mcp; `dev` reads the variable)', type: 'whole number', unit: 'ms', default: '3600000', schema: wholeNumber(1_000), expected: 'a whole number of milliseconds ≥ 1000',
    what: 'with `content`: an identical call within one window of the first is the same effect (a re-issue; the window slides once, so up to two windows); one meant as another effect must carry `effectd_repeat`. Longer than any client\'s retries',
  }),
  EFFECTD_LOG_LEVEL: setting({
    type: LOG_LEVELS.map((l) => `\`${l}\``).join(' \\| '), schema: oneOf(LOG_LEVELS), expected: `one of ${LOG_LEVELS.join(', ')}`,
    defaultText: '`info` (`start`, `dev`); `warn` for embedded runtimes (`demo`, `mcp`)',
    what: 'the least severe level logged ([operations.md](operations.md#logs))',
  }),
  EFFECTD_LOG_FORMAT: setting({
    type: '`json` \\| `pretty`', schema: oneOf(['json', 'pretty']), expected: 'json or pretty (unset: pretty on a terminal, JSON lines otherwise)',
    defaultText: 'pretty on a terminal, JSON lines otherwise',
    what: 'the log\'s form; the log of `start` and `dev` is on stdout, embedded runtimes\' on stderr',
  }),
  OTEL_SDK_DISABLED: setting({
    type: '`true` \\| `false`', default: 'false', schema: z.string().transform((v) => v.trim().toLowerCase() === 'true'), expected: 'true or false',
    what: '`true` turns traces off, whatever else is set ([operations.md](operations.md#traces))',
  }),
  OTEL_TRACES_EXPORTER: setting({
    type: '`otlp` \\| `none`', schema: z.string().transform((v) => v.split(',').map((e) => e.trim().toLowerCase()).filter(Boolean)).pipe(z.array(z.enum(['otlp', 'none']))),
    expected: 'otlp or none: effectd exports traces over OTLP/HTTP only (or leave it unset and set OTEL_EXPORTER_OTLP_ENDPOINT)',
    defaultText: 'traces off', what: '`otlp` exports traces (to `http://localhost:4318/v1/traces` unless an endpoint is set); `none` turns them off',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: setting({
    type: 'URL', schema: trimmed, expected: 'an http(s) URL, e.g. http://localhost:4318',
    what: 'export traces over OTLP/HTTP to this URL + `/v1/traces`',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: setting({
    type: 'URL', schema: trimmed, expected: 'an http(s) URL, e.g. http://localhost:4318/v1/traces',
    what: 'export traces over OTLP/HTTP to this URL, as is (wins over `OTEL_EXPORTER_OTLP_ENDPOINT`)',
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: setting({
    type: '`http/json` \\| `http/protobuf`', default: 'http/json', schema: z.string().trim().toLowerCase(), expected: 'http/json or http/protobuf',
    what: 'OTLP/HTTP; `http/protobuf` is accepted (spans are sent as JSON, on the same path); `grpc` is refused',
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: setting({
    type: '`http/json` \\| `http/protobuf`', schema: z.string().trim().toLowerCase(), expected: 'http/json or http/protobuf',
    defaultText: '`OTEL_EXPORTER_OTLP_PROTOCOL`', what: 'the same, for traces only',
  }),
  OTEL_SERVICE_NAME: setting({
    type: 'string', default: 'effectd', schema: trimmed, expected: 'a service name',
    what: 'the service name spans are exported under',
  }),
  OTEL_BSP_SCHEDULE_DELAY: setting({
    type: 'whole number', unit: 'ms', schema: wholeNumber(1), expected: POSITIVE, defaultText: 'the OpenTelemetry SDK\'s (5000)',
    what: 'the delay between two exports of the span batch processor',
  }),
  OTEL_BSP_MAX_QUEUE_SIZE: setting({
    type: 'whole number', unit: 'spans', schema: wholeNumber(1), expected: POSITIVE, defaultText: 'the OpenTelemetry SDK\'s (2048)',
    what: 'spans queued at most; more are dropped',
  }),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: setting({
    type: 'whole number', unit: 'spans', schema: wholeNumber(1), expected: POSITIVE, defaultText: 'the OpenTelemetry SDK\'s (512)',
    what: 'spans per export at most; at most the queue size',
  }),
  OTEL_BSP_EXPORT_TIMEOUT: setting({
    type: 'whole number', unit: 'ms', schema: wholeNumber(1), expected: POSITIVE, defaultText: 'the OpenTelemetry SDK\'s (30000)',
    what: 'how long one export may take',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: setting({
    type: '`key=value,…`', schema: text, expected: 'key=value pairs', secret: true, readBy: 'the OTLP exporter',
    what: 'headers the exporter sends (an API key); never logged',
  }),
  OTEL_EXPORTER_OTLP_TIMEOUT: setting({
    type: 'whole number', unit: 'ms', schema: text, expected: POSITIVE, readBy: 'the OTLP exporter', defaultText: 'the OpenTelemetry default (10000)',
    what: 'how long the exporter waits for the receiver',
  }),
  OTEL_EXPORTER_OTLP_COMPRESSION: setting({
    type: '`gzip` \\| `none`', schema: text, expected: 'gzip or none', readBy: 'the OTLP exporter', defaultText: 'none',
    what: 'compression of what the exporter sends',
  }),
} satisfies Record<string, SettingSpec<unknown>>;

export type SettingName = keyof typeof SETTINGS;

/** A value of each variable after parsing; undefined where a variable without a default is unset. */
export type SettingValues = {
  [K in SettingName]: (typeof SETTINGS)[K] extends { default: string } ? z.output<(typeof SETTINGS)[K]['schema']> : z.output<(typeof SETTINGS)[K]['schema']> | undefined;
};

/**
 * The pattern variables: `EFFECTD_PROVIDER_<NAME>_URL` replaces the base URL (or MCP `url`) of
 * provider `<NAME>`: the name upper-cased, every character other than a letter or digit as `_`.
 */
export const PROVIDER_URL_SETTING = {
  pattern: /^EFFECTD_PROVIDER_(.+)_URL$/,
  name: 'EFFECTD_PROVIDER_<NAME>_URL',
  type: 'URL',
  expected: 'an http(s) URL (it replaces a provider\'s base URL, e.g. http://127.0.0.1:4400)',
  what: 'the base URL (or MCP `url`) of provider `<NAME>`: its name upper-cased, non-alphanumerics as `_` ([above](#provider-urls-from-the-environment))',
  schema: httpUrl,
} as const;

/** `payments-v2` → EFFECTD_PROVIDER_PAYMENTS_V2_URL. */
export function providerUrlVariable(provider: string): string {
  return `EFFECTD_PROVIDER_${provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_URL`;
}

/** The CLI flags that set what a variable sets; a flag given wins over the variable. */
export interface SettingFlags {
  dataDir?: string | boolean;
  ledger?: string | boolean;
  config?: string | boolean;
  url?: string | boolean;
  token?: string | boolean;
  workers?: string | boolean;
  group?: string | boolean;
}

/** Which variable each flag stands for, and how the flag is spelled in an error. */
export const FLAG_SETTINGS: Record<keyof SettingFlags, { variable: SettingName; flag: string }> = {
  dataDir: { variable: 'EFFECTD_DATA_DIR', flag: '--data-dir' },
  ledger: { variable: 'EFFECTD_LEDGER', flag: '--ledger' },
  config: { variable: 'EFFECTD_CONFIG', flag: '--config' },
  url: { variable: 'EFFECTD_URL', flag: '--url' },
  token: { variable: 'EFFECTD_TOKEN', flag: '--token' },
  workers: { variable: 'EFFECTD_WORKERS', flag: '--workers' },
  group: { variable: 'EFFECTD_KAFKA_GROUP', flag: '--group' },
};
