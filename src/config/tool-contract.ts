import { DEFAULT_COMPENSATION_RETRY } from '../core/saga/saga-decision.js';
import { z } from 'zod';
import { ANSWER_BUDGET_MARGIN_MS, answerBudgetCeilingMs } from '../core/answer-budget.js';
import { argFieldSpec } from '../core/arg-fields.js';
import { outcomeClass } from '../core/events.js';
import { sagaDefinitionSpec } from './saga-definition-spec.js';

/**
 * What effectd knows about a tool, as declared in a configuration file. The built-in simulated
 * providers' tools (config/builtin-tools.json) are declared with this very schema.
 */
const template = z.string().min(1);

/**
 * What the provider does with a same-key resend after the first execution failed (a 5xx):
 * `replayed` — it stores the failure and answers it again (Stripe v1), so a replayed 5xx poisons
 * the key; `retried` — it executes the failed work again (Stripe v2), so a resend can still
 * complete it and a replayed 5xx leaves the outcome open.
 */
const storedFailures = z.enum(['replayed', 'retried']).default('replayed');

export const idempotencySpec = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('header'),
    header: z.string().default('Idempotency-Key'),
    /** How long the provider remembers a key (its documented lower bound). */
    retentionMs: z.number().int().positive(),
    /** The provider answers a repeated key with the first result instead of acting again. */
    dedupes: z.boolean().default(true),
    storedFailures,
  }).strict(),
  z.object({
    kind: z.literal('body-field'),
    field: z.string(),
    retentionMs: z.number().int().positive(),
    dedupes: z.boolean().default(true),
    storedFailures,
  }).strict(),
  /**
   * An upstream MCP server's tool: the key travels in the request's `_meta`
   * (`dev.effectd/idempotencyKey`), and also in `mcp.keyArgument` when the contract names one.
   */
  z.object({
    kind: z.literal('meta'),
    retentionMs: z.number().int().positive(),
    dedupes: z.boolean().default(true),
    storedFailures,
  }).strict(),
  z.object({ kind: z.literal('none') }).strict(),
]);

export const referenceSpec = z.discriminatedUnion('kind', [
  /** Put the reference at a path of the JSON body (e.g. `metadata.effectd_ref`, `headers.X-Entity-Ref-ID`). */
  z.object({ kind: z.literal('body-path'), path: z.string() }).strict(),
  /** Append the reference to a string field of the body (e.g. a journal line). */
  z.object({ kind: z.literal('append'), field: z.string(), format: z.string().default(' [ref:{ref}]') }).strict(),
  z.object({ kind: z.literal('none') }).strict(),
]);

export const lookupSpec = z.discriminatedUnion('by', [
  z.object({
    by: z.enum(['key', 'reference', 'name']),
    method: z.literal('GET').default('GET'),
    path: template,
    /** Dotted path of the array of matches in the response. */
    resultsPath: z.string(),
    receiptPath: z.string().optional(),
    /** The lookup is read-after-write consistent: "not found" after the settle window proves absence. */
    consistent: z.boolean().default(false),
  }).strict(),
  z.object({ by: z.literal('none') }).strict(),
]);

/** How effectd asks an upstream MCP server whether an effect exists: a read-only upstream tool, queried by the reference or the key. */
export const mcpLookupSpec = z.object({
  by: z.enum(['reference', 'key']).default('reference'),
  /** The upstream tool to call (read-only: effectd calls it as often as reconciliation needs). */
  tool: z.string().min(1),
  /** Its arguments: a template over `{ref}`, `{key}`, `{args.*}`, `{provider.*}`. */
  arguments: z.record(z.string(), z.unknown()),
  /** Dotted path of the array of matches in the tool's result (e.g. `structuredContent.charges`). */
  resultsPath: z.string().min(1),
  /** Dotted path of the receipt in one match (e.g. `id`). */
  receiptPath: z.string().optional(),
  /** The lookup is read-after-write consistent: "not found" after the settle window proves absence. */
  consistent: z.boolean().default(false),
}).strict();

/** A tool of an upstream MCP server, mapped to this contract (the upstream's own annotations are not trusted). */
export const mcpCallSpec = z.object({
  /** The upstream tool's name (`tools/call` params.name). */
  tool: z.string().min(1),
  /** Its arguments: a template over `{args.*}`, `{provider.*}`, `{key}`, `{ref}`; the canonical args as-is when absent. */
  arguments: z.record(z.string(), z.unknown()).optional(),
  /** Also put the provider key in this argument (dotted path), for upstreams that read it there rather than from `_meta`. */
  keyArgument: z.string().min(1).optional(),
  /** Stamp the effect's reference into this argument (dotted path, e.g. `reference` or `metadata.effectd_ref`). */
  referenceArgument: z.string().min(1).optional(),
  /** Dotted path of the receipt in the tool's result (e.g. `structuredContent.id`). */
  receiptPath: z.string().optional(),
  lookup: mcpLookupSpec.optional(),
}).strict();
export type McpCallSpec = z.infer<typeof mcpCallSpec>;

export const toolContractSpec = z.object({
  name: z.string().regex(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$/, 'tool names are lower-case words joined by dots, e.g. payments.charge'),
  version: z.number().int().positive().default(1),
  description: z.string().default(''),
  provider: z.string(),
  /** An HTTP provider's request; a tool of an upstream MCP server declares `mcp` instead. */
  request: z.object({
    method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    path: template,
    encoding: z.enum(['json', 'form']).default('json'),
    /** Body template over `{args.*}`, `{provider.*}`, `{key}`, `{ref}`; the canonical args as-is when absent. */
    body: z.record(z.string(), z.unknown()).optional(),
  }).strict().optional(),
  /** The upstream MCP server's tool this contract calls (the provider is an `mcp` provider). */
  mcp: mcpCallSpec.optional(),
  args: z.record(z.string(), argFieldSpec).refine((a) => Object.keys(a).length > 0, 'a tool needs at least one argument'),
  /** Template naming what the effect acts on, for people and the content index (e.g. `{args.invoiceId}`). */
  target: template,
  reversibility: z.enum(['read', 'idempotent', 'compensable', 'irreversible']),
  /**
   * The target legitimately takes concurrent effects (e.g. many messages to one channel): a new
   * effect on it is not held while another is unknown. Default false: "do not start another".
   */
  concurrentTargets: z.boolean().default(false),
  /**
   * How many committed effects the target takes: `one` (an invoice is paid once, a booking made
   * once): a new effect on a target that already has a committed one is held as "already done"
   * unless it is a declared repeat. `many` (default): messages, notes, instances.
   */
  committedPerTarget: z.enum(['one', 'many']).default('many'),
  /** The arguments that make two calls the same thing in business terms (the content index); all arguments when absent. */
  businessFields: z.array(z.string()).min(1).optional(),
  idempotency: idempotencySpec,
  /** The provider's key scope, e.g. { account: '{provider.account}', region: '{args.region}' }. */
  scope: z.record(z.string(), z.string()).default({}),
  reference: referenceSpec.default({ kind: 'none' }),
  lookup: lookupSpec.default({ by: 'none' }),
  receiptPath: z.string().optional(),
  replayHeader: z.string().transform((h) => h.toLowerCase()).optional(),
  classify: z.array(z.object({ status: z.number().int(), bodyIncludes: z.string().optional(), outcome: outcomeClass }).strict()).default([]),
  timeoutMs: z.number().int().positive().default(10_000),
  /** How long after dispatch a provider may still commit or become searchable. */
  settleWindowMs: z.number().int().nonnegative().default(60_000),
  /**
   * How long after a proof of absence (a consistent lookup that found nothing after the settle
   * window) the reference is looked up once more: a request that reached the provider later than
   * the window (a slow network, a queue in front of it) is found then, recorded as a late arrival
   * and put before an operator. Default: 3× the settle window, and at least the window + 10 s.
   */
  absenceAuditMs: z.number().int().positive().optional(),
  /**
   * After a lost reply, how long the answer may wait for reconciliation to settle it (inline
   * settle): 0 answers `unknown` at once. Absent: EFFECTD_ANSWER_BUDGET_MS (2 s), within the
   * tool's timeout plus ANSWER_BUDGET_MARGIN_MS, which an explicit value may not exceed either.
   */
  answerBudgetMs: z.number().int().nonnegative().optional(),
  /**
   * How to undo one object this tool created, given its receipt: `{receipt}` and `{args.*}` in
   * `args` (e.g. payments.refund with { chargeId: '{receipt}' }). Offered to operators for the extra
   * object of a detected duplicate; sagas declare their own compensations (sagas/, compensations/).
   */
  undo: z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()) }).strict().optional(),
  /**
   * Same-key resends of an unknown effect: at most `max`, and none later than `withinMs` after the
   * first dispatch; then a human decides. Bounds a provider whose stored failures look like fresh ones.
   */
  resends: z.object({
    max: z.number().int().nonnegative().default(3),
    withinMs: z.number().int().positive().default(3_600_000),
  }).strict().default({ max: 3, withinMs: 3_600_000 }),
}).strict().superRefine((tool, ctx) => {
  if (tool.answerBudgetMs !== undefined && tool.answerBudgetMs > answerBudgetCeilingMs(tool.timeoutMs)) {
    ctx.addIssue({ code: 'custom', path: ['answerBudgetMs'], message: `${tool.answerBudgetMs} ms is longer than the tool's timeoutMs (${tool.timeoutMs}) plus ${ANSWER_BUDGET_MARGIN_MS} ms: a lost reply's answer may wait at most ${answerBudgetCeilingMs(tool.timeoutMs)} ms by default (callers may ask for more with Prefer: wait, up to EFFECTD_ANSWER_BUDGET_MAX_MS)` });
  }
});

export type ToolContractSpec = z.infer<typeof toolContractSpec>;

/** A provider's URL: http or https only (a file:, gopher: or ftp: URL would fail at every dispatch after a claim was recorded). */
const providerUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL (e.g. https://api.example.com)' });

export const httpProviderSpec = z.object({
  baseUrl: providerUrl,
  headers: z.record(z.string(), z.string()).default({}),
  /** Values templates can name as `{provider.x}` (account id, default region…). */
  values: z.record(z.string(), z.string()).default({}),
}).strict();
export type HttpProviderSpec = z.infer<typeof httpProviderSpec>;

/** An upstream MCP server: Streamable HTTP at a URL, or a stdio child process effectd starts. */
export const mcpProviderSpec = z.object({
  mcp: z.union([
    z.object({
      url: providerUrl,
      /** Sent with every request (e.g. the upstream's Authorization). */
      headers: z.record(z.string(), z.string()).default({}),
    }).strict(),
    z.object({
      command: z.string().min(1),
      args: z.array(z.string()).default([]),
      /** The child's environment (the SDK's safe defaults when absent). */
      env: z.record(z.string(), z.string()).optional(),
      cwd: z.string().optional(),
    }).strict(),
  ]),
  values: z.record(z.string(), z.string()).default({}),
}).strict();
export type McpProviderSpec = z.infer<typeof mcpProviderSpec>;

export type ProviderSpec = HttpProviderSpec | McpProviderSpec;

export function isMcpProvider(provider: ProviderSpec): provider is McpProviderSpec {
  return 'mcp' in provider;
}

/**
 * A provider is HTTP (`baseUrl`) or an upstream MCP server (`mcp`): the shape is chosen by the
 * `mcp` key, so a mistake is reported against the shape the operator meant, not as "Invalid input".
 */
export const providerSpec = z.unknown().transform((raw, ctx): ProviderSpec => {
  const mcp = raw !== null && typeof raw === 'object' && 'mcp' in raw;
  const parsed = mcp ? mcpProviderSpec.safeParse(raw) : httpProviderSpec.safeParse(raw);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    const message = mcp && issue.path[1] === undefined && issue.path[0] === 'mcp' && issue.code === 'invalid_union'
      ? 'an MCP provider is { "url": "http://…/mcp", "headers"?: {…} } or { "command": "…", "args"?: […] }'
      : issue.message;
    ctx.addIssue({ code: 'custom', message, path: [...issue.path] });
  }
  return z.NEVER;
});

export const effectdConfigSpec = z.object({
  /** The JSON Schema this file follows (config/effectd.config.schema.json), for editors; effectd ignores it. */
  $schema: z.string().optional(),
  providers: z.record(z.string(), providerSpec).default({}),
  tools: z.array(toolContractSpec).default([]),
  /**
   * Include the built-in simulated providers and their tools (config/builtin-tools.json). Default
   * false in a config file; effectd started with no config file runs with them.
   */
  builtinTools: z.boolean().default(false),
  /** Register the built-in sagas (sagas/: trip-booking, subscription-renewal) when their tools are configured. Default: as builtinTools. */
  builtinSagas: z.boolean().optional(),
  contentIndex: z.object({
    /** Also hold a new step whose content matches an effect of ANOTHER workflow of the tenant declared within this window (0 = same workflow only). */
    tenantWindowMs: z.number().int().nonnegative().default(0),
  }).strict().default({ tenantWindowMs: 0 }),
  /** The config's own sagas (an ES module config: `sagas: [defineSaga(…)]`), or `{ definitions, compensationRetry }`. */
  sagas: z.union([z.array(sagaDefinitionSpec).transform((definitions) => ({ definitions, compensationRetry: { ...DEFAULT_COMPENSATION_RETRY } })), z.object({
    definitions: z.array(sagaDefinitionSpec).default([]),
    /** A compensation whose request never left (connection refused) is sent again this many times in all, backing off, before a human is asked. */
    compensationRetry: z.object({
      attempts: z.number().int().min(1).default(DEFAULT_COMPENSATION_RETRY.attempts),
      firstDelayMs: z.number().int().nonnegative().default(DEFAULT_COMPENSATION_RETRY.firstDelayMs),
      maxDelayMs: z.number().int().nonnegative().default(DEFAULT_COMPENSATION_RETRY.maxDelayMs),
    }).strict().default({ ...DEFAULT_COMPENSATION_RETRY }),
  }).strict()]).default({ definitions: [], compensationRetry: { ...DEFAULT_COMPENSATION_RETRY } }),
}).strict();
export type EffectdConfig = z.infer<typeof effectdConfigSpec>;
