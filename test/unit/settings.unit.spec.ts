// One settings schema (issue 26, item 2): every EFFECTD_* variable (and the OTEL_* ones effectd
// reads) in one table (src/config/settings.ts), loaded once by loadSettings (settings-loader.ts).
// The reference in docs/configuration.md is generated from the table: this test fails when the two
// differ; regenerate with `npm run docs:settings`.
import { readFileSync, writeFileSync } from 'node:fs';
import { ESLint } from 'eslint';
import { describe, expect, it, vi } from 'vitest';
import { configCommand } from '../../src/cli/config.command.js';
import { loadSettings } from '../../src/config/settings-loader.js';
import { settingsMarkdown, settingsReference } from '../../src/config/settings-reference.js';
import { SETTINGS } from '../../src/config/settings.js';
import { DEFAULT_ANSWER_BUDGET } from '../../src/core/answer-budget.js';
import { isEffectdError } from '../../src/core/errors.js';
import { DEFAULT_RECENT_EFFECTS } from '../../src/runtime/open-effects-projection.js';
import { DEFAULT_MAX_CACHED_EFFECTS } from '../../src/shell/workflow-store.js';
import { packageRoot } from '../../src/shared/package-root.js';

const DOC = 'docs/configuration.md';
const BEGIN = '<!-- settings:begin (generated from src/config/settings.ts by `npm run docs:settings`; do not edit) -->';
const END = '<!-- settings:end -->';

/** The error loadSettings throws for `env` (and `flags`), which must be one. */
function refusal(env: Record<string, string>, flags: Parameters<typeof loadSettings>[1] = {}): Error & { code?: string; details?: Record<string, unknown> } {
  try {
    loadSettings(env, flags);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`loadSettings accepted ${JSON.stringify(env)} ${JSON.stringify(flags)}`);
}

describe('the settings reference in docs/configuration.md', () => {
  it('is the one the table generates (regenerate with npm run docs:settings)', () => {
    const doc = readFileSync(DOC, 'utf8');
    const begin = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    expect(begin, `${DOC} has no generated settings reference (markers missing)`).toBeGreaterThanOrEqual(0);
    const current = doc.slice(begin, end + END.length);
    const generated = `${BEGIN}\n${settingsMarkdown()}\n${END}`;
    if (process.env.UPDATE_DOCS === '1' && current !== generated) writeFileSync(DOC, doc.replace(current, generated));
    else expect(current).toBe(generated);
  });

  it('has a row per variable of the table, each with a type and a meaning, plus the provider URL pattern', () => {
    const rows = settingsReference();
    expect(rows.map((r) => r.variable).filter((v) => v !== 'EFFECTD_PROVIDER_<NAME>_URL')).toEqual(Object.keys(SETTINGS));
    for (const row of rows) {
      expect(row.type, row.variable).not.toBe('');
      expect(row.what, row.variable).not.toBe('');
    }
    expect(rows.some((r) => r.variable === 'EFFECTD_PROVIDER_<NAME>_URL')).toBe(true);
  });

  it('is what effectd config settings prints (Markdown, or JSON with --json)', async () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await configCommand.run({}, ['settings'], {})).toBe(0);
      expect(await configCommand.run({ json: true }, ['settings'], {})).toBe(0);
      const [markdown, json] = write.mock.calls.map(([text]) => String(text));
      expect(markdown).toBe(`${settingsMarkdown()}\n`);
      expect(JSON.parse(json!)).toEqual({ settings: JSON.parse(JSON.stringify(settingsReference())) });
    } finally {
      write.mockRestore();
    }
  });
});

describe('loadSettings', () => {
  it('gives every default with nothing set, frozen', () => {
    const settings = loadSettings({});
    expect(settings).toMatchObject({
      dataDir: undefined,
      ledger: { url: undefined, encoding: 'compact', compression: 'none' },
      configFile: undefined,
      secret: undefined,
      credentialsFile: undefined,
      url: 'http://127.0.0.1:8080',
      token: undefined,
      workers: 1,
      worker: undefined,
      recentEffects: 10_000,
      workflowCacheEffects: 20_000,
      drainTimeoutMs: 30_000,
      http: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_024 },
      kafka: {
        groupId: 'effectd',
        topics: { commands: 'effectd.commands', outcomes: 'effectd.outcomes', deadLetters: 'effectd.dlq' },
        maxInFlight: 256, partitionsConcurrently: 6, sessionTimeoutMs: 30_000,
      },
      answerBudget: { defaultMs: 2_000, maxMs: 10_000 },
      log: { level: undefined, format: undefined },
      providerUrls: {},
      tracing: { kind: 'off' },
    });
    expect(Object.isFrozen(settings)).toBe(true);
    expect(Object.isFrozen(settings.kafka.topics)).toBe(true);
    expect(() => {
      (settings as { drainTimeoutMs: number }).drainTimeoutMs = 1;
    }).toThrow(TypeError);
  });

  it('has the defaults the code it configures was written with', () => {
    const settings = loadSettings({});
    expect(settings.recentEffects).toBe(DEFAULT_RECENT_EFFECTS);
    expect(settings.workflowCacheEffects).toBe(DEFAULT_MAX_CACHED_EFFECTS);
    expect(settings.answerBudget).toEqual(DEFAULT_ANSWER_BUDGET);
  });

  it('parses each kind of value: whole numbers, choices, paths, URLs, the provider URL pattern', () => {
    const settings = loadSettings({
      EFFECTD_DATA_DIR: '/var/lib/effectd', EFFECTD_LEDGER: 'postgres://u:p@db/effectd', EFFECTD_CONFIG: 'effectd.config.mjs',
      EFFECTD_CREDENTIALS: '/etc/effectd/credentials.json', EFFECTD_URL: 'https://effectd.internal/', EFFECTD_TOKEN: 'tok',
      EFFECTD_WORKERS: 'auto', EFFECTD_WORKER: '3', EFFECTD_RECENT_EFFECTS: ' 500 ', EFFECTD_WORKFLOW_CACHE: '100',
      EFFECTD_LEDGER_ENCODING: 'verbatim', EFFECTD_LEDGER_COMPRESSION: 'deflate', EFFECTD_DRAIN_TIMEOUT_MS: '1000',
      EFFECTD_KAFKA_GROUP: 'billing', EFFECTD_KAFKA_DLQ_TOPIC: 'billing.dlq', EFFECTD_KAFKA_SESSION_TIMEOUT_MS: '10000',
      EFFECTD_ANSWER_BUDGET_MAX_MS: '500', EFFECTD_LOG_LEVEL: 'debug', EFFECTD_LOG_FORMAT: 'json',
      EFFECTD_PROVIDER_PAYMENTS_V2_URL: 'http://127.0.0.1:4401', UNRELATED: 'x',
    });
    expect(settings).toMatchObject({
      dataDir: '/var/lib/effectd', ledger: { url: 'postgres://u:p@db/effectd', encoding: 'verbatim', compression: 'deflate' },
      configFile: 'effectd.config.mjs', credentialsFile: '/etc/effectd/credentials.json', url: 'https://effectd.internal', token: 'tok',
      workers: 'auto', worker: 3, recentEffects: 500, workflowCacheEffects: 100, drainTimeoutMs: 1_000,
      kafka: { groupId: 'billing', topics: { commands: 'effectd.commands', deadLetters: 'billing.dlq' }, sessionTimeoutMs: 10_000 },
      // The default budget follows a lower cap (2000 would be above it).
      answerBudget: { defaultMs: 500, maxMs: 500 },
      log: { level: 'debug', format: 'json' },
      providerUrls: { EFFECTD_PROVIDER_PAYMENTS_V2_URL: 'http://127.0.0.1:4401' },
    });
  });

  it('takes a blank value as unset', () => {
    expect(loadSettings({ EFFECTD_RECENT_EFFECTS: '', EFFECTD_KAFKA_GROUP: '  ', EFFECTD_LOG_LEVEL: '', EFFECTD_PROVIDER_CRM_URL: '' })).toEqual(loadSettings({}));
  });

  it('lets a flag win over its variable, and checks the flag the same way, naming the flag', () => {
    const env = { EFFECTD_DATA_DIR: '/from/env', EFFECTD_LEDGER: 'sqlite:/env.db', EFFECTD_CONFIG: 'env.json', EFFECTD_URL: 'http://env:8080', EFFECTD_TOKEN: 'env-token', EFFECTD_WORKERS: '4', EFFECTD_KAFKA_GROUP: 'env-group' };
    expect(loadSettings(env, { dataDir: '/from/flag', ledger: 'sqlite:/flag.db', config: 'flag.json', url: 'http://flag:9090', token: 'flag-token', workers: '2', group: 'flag-group' })).toMatchObject({
      dataDir: '/from/flag', ledger: { url: 'sqlite:/flag.db' }, configFile: 'flag.json', url: 'http://flag:9090', token: 'flag-token', workers: 2, kafka: { groupId: 'flag-group' },
    });
    // A flag not given leaves the variable.
    expect(loadSettings(env, { dataDir: undefined, workers: undefined })).toMatchObject({ dataDir: '/from/env', workers: 4 });
    expect(refusal({ EFFECTD_WORKERS: '2' }, { workers: 'lots' }).message).toBe('--workers must be a whole number from 1 to 256 or "auto" (one per core), not "lots"');
    expect(refusal({}, { url: 'ftp://x' }).message).toMatch(/^--url must be an http\(s\) URL, e\.g\. http:\/\/127\.0\.0\.1:8080, not "ftp:\/\/x"$/);
  });

  it('refuses a value it cannot use with the variable, what was given and what is expected (invalid_config)', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ EFFECTD_RECENT_EFFECTS: 'many' }, /^EFFECTD_RECENT_EFFECTS must be a positive whole number, not "many"$/],
      [{ EFFECTD_WORKFLOW_CACHE: '0' }, /^EFFECTD_WORKFLOW_CACHE must be a positive whole number, not "0"$/],
      [{ EFFECTD_DRAIN_TIMEOUT_MS: '30s' }, /^EFFECTD_DRAIN_TIMEOUT_MS must be a positive whole number of milliseconds, not "30s"$/],
      [{ EFFECTD_HTTP_MAX_CONNECTIONS: '1e3' }, /^EFFECTD_HTTP_MAX_CONNECTIONS must be a positive whole number, not "1e3"$/],
      [{ EFFECTD_KAFKA_MAX_IN_FLIGHT: '-1' }, /^EFFECTD_KAFKA_MAX_IN_FLIGHT must be a positive whole number, not "-1"$/],
      [{ EFFECTD_WORKERS: '257' }, /^EFFECTD_WORKERS must be a whole number from 1 to 256 or "auto" \(one per core\), not "257"$/],
      [{ EFFECTD_LOG_LEVEL: 'verbose' }, /^EFFECTD_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not "verbose"$/],
      [{ EFFECTD_LEDGER_ENCODING: 'short' }, /^EFFECTD_LEDGER_ENCODING must be compact or verbatim .*, not "short"$/],
      [{ EFFECTD_URL: 'localhost:8080' }, /^EFFECTD_URL must be an http\(s\) URL, e\.g\. http:\/\/127\.0\.0\.1:8080, not "localhost:8080"$/],
      [{ EFFECTD_PROVIDER_CRM_URL: 'file:///etc/passwd' }, /^EFFECTD_PROVIDER_CRM_URL must be an http\(s\) URL \(it replaces a provider's base URL, e\.g\. http:\/\/127\.0\.0\.1:4400\), not "file:\/\/\/etc\/passwd"$/],
      [{ EFFECTD_HTTP_REQUEST_TIMEOUT_MS: '5000' }, /^EFFECTD_HTTP_HEADERS_TIMEOUT_MS \(10000\) must not exceed EFFECTD_HTTP_REQUEST_TIMEOUT_MS \(5000\)/],
      [{ EFFECTD_ANSWER_BUDGET_MS: '5000', EFFECTD_ANSWER_BUDGET_MAX_MS: '1000' }, /^EFFECTD_ANSWER_BUDGET_MS \(5000\) is above EFFECTD_ANSWER_BUDGET_MAX_MS \(1000\)/],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /^OTEL_EXPORTER_OTLP_PROTOCOL=grpc: effectd exports traces over OTLP\/HTTP/],
    ];
    for (const [env, message] of cases) {
      const error = refusal(env);
      expect(error.message, JSON.stringify(env)).toMatch(message);
      expect(isEffectdError(error, 'invalid_config'), JSON.stringify(env)).toBe(true);
    }
    expect(refusal({ EFFECTD_RECENT_EFFECTS: 'x' }).details).toMatchObject({ variable: 'EFFECTD_RECENT_EFFECTS' });
  });

  it('lists every value it cannot use at once, and never repeats a secret', () => {
    const error = refusal({ EFFECTD_RECENT_EFFECTS: 'x', EFFECTD_LOG_FORMAT: 'xml', EFFECTD_TOKEN: '   ', EFFECTD_PROVIDER_A_URL: 'nope' });
    expect(error.message).toBe([
      '3 settings effectd cannot use:',
      '  - EFFECTD_RECENT_EFFECTS must be a positive whole number, not "x"',
      '  - EFFECTD_LOG_FORMAT must be json or pretty (unset: pretty on a terminal, JSON lines otherwise), not "xml"',
      '  - EFFECTD_PROVIDER_A_URL must be an http(s) URL (it replaces a provider\'s base URL, e.g. http://127.0.0.1:4400), not "nope"',
    ].join('\n'));
    expect(error.details).toMatchObject({ variables: ['EFFECTD_RECENT_EFFECTS', 'EFFECTD_LOG_FORMAT', 'EFFECTD_PROVIDER_A_URL'] });
    const leaked = refusal({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s3cret', EFFECTD_KAFKA_SESSION_TIMEOUT_MS: 'soon' });
    expect(leaked.message).not.toMatch(/s3cret/);
  });

  it('reads the OTEL_* variables into where traces go', () => {
    expect(loadSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'gw', OTEL_BSP_MAX_QUEUE_SIZE: '4096' }).tracing)
      .toEqual({ kind: 'otlp', serviceName: 'gw', endpoint: 'http://collector:4318/v1/traces', batch: { maxQueueSize: 4096 } });
    expect(loadSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }).tracing).toEqual({ kind: 'off' });
  });
});

describe('the lint rule on process.env', () => {
  const eslint = new ESLint({ cwd: packageRoot(), cache: false });
  const restricted = async (file: string) => (await eslint.calculateConfigForFile(file) as { rules?: Record<string, unknown> }).rules?.['no-restricted-properties'];

  it('holds in every module of src/ but the CLI entry', async () => {
    for (const file of ['src/runtime/effectd-runtime.ts', 'src/runtime/compose.ts', 'src/api/http-server.ts', 'src/cli/start.command.ts', 'src/config/settings-loader.ts', 'src/transport/kafka/kafka-settings.ts', 'src/sdk/effect-client.ts', 'src/core/answer-budget.ts']) {
      expect(await restricted(file), file).toEqual([2, expect.objectContaining({ object: 'process', property: 'env' })]);
    }
    for (const file of ['src/cli/main.ts']) expect(await restricted(file), file).toBeUndefined();
  });
});
