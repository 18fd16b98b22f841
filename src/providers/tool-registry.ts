import type { z } from 'zod';
import { argsSchema, type CanonicalArgs } from '../core/arg-fields.js';
import type { ClassificationRules } from '../core/classify.js';
import { EffectdError } from '../core/errors.js';
import type { ProviderScope } from '../core/identity.js';
import type { EffectPolicy } from '../core/next-step.js';
import { absenceAuditAfterMs } from '../core/reconcile-schedule.js';
import { secretSet, type SecretSet } from '../core/secret-redaction.js';
import { providerSecrets } from './provider-secrets.js';
import { fillString, placeholders } from './templates.js';
import { isMcpProvider, type EffectdConfig, type ProviderSpec, type ToolContractSpec } from '../config/tool-contract.js';

/** A tool's contract, compiled: ready to canonicalize arguments and build requests. */
export interface Tool {
  readonly name: string;
  readonly spec: ToolContractSpec;
  readonly provider: ProviderSpec & { name: string };
  readonly schema: z.ZodType<CanonicalArgs>;
  readonly classification: ClassificationRules;
  /** How its effects are reconciled and held (computed once, here): what the decider takes. */
  readonly policy: EffectPolicy;
  /** How long the provider protects a key, or null when the tool has none. */
  readonly keyRetentionMs: number | null;
  target(args: CanonicalArgs): string;
  scope(args: CanonicalArgs): ProviderScope;
}

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  /**
   * Every secret the configured providers hold (headers, URL credentials, …), compiled: what the
   * shell blanks in every text derived from a provider exchange (src/core/secret-redaction.ts).
   */
  readonly secrets: SecretSet;

  constructor(config: EffectdConfig) {
    this.secrets = secretSet(providerSecrets(config.providers));
    for (const spec of config.tools) {
      if (this.tools.has(spec.name)) throw configError(spec.name, 'name', 'is declared twice');
      const provider = config.providers[spec.provider];
      if (!provider) throw configError(spec.name, 'provider', `names provider "${spec.provider}", which is not in "providers" (known: ${Object.keys(config.providers).join(', ') || 'none'})`);
      checkKind(spec, spec.provider, provider);
      checkPlaceholders(spec, provider);
      this.tools.set(spec.name, compile(spec, { ...provider, name: spec.provider }));
    }
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  list(): Tool[] {
    return [...this.tools.values()];
  }
}

function compile(spec: ToolContractSpec, provider: ProviderSpec & { name: string }): Tool {
  const keyed = spec.idempotency.kind !== 'none';
  return {
    name: spec.name,
    spec,
    provider,
    schema: argsSchema(spec.args, pathArgsOf(spec)),
    classification: {
      receiptPath: spec.mcp ? spec.mcp.receiptPath : spec.receiptPath, replayHeader: spec.replayHeader, overrides: spec.classify,
      storedFailures: spec.idempotency.kind === 'none' ? 'replayed' : spec.idempotency.storedFailures,
    },
    policy: effectPolicy(spec),
    keyRetentionMs: keyed && spec.idempotency.kind !== 'none' ? spec.idempotency.retentionMs : null,
    target: (args) => fillString(spec.target, { args, provider: provider.values }),
    scope: (args) => {
      const scope: ProviderScope = { provider: provider.name, endpoint: spec.mcp ? `MCP ${spec.mcp.tool}` : `${spec.request!.method} ${spec.request!.path}` };
      for (const [name, template] of Object.entries(spec.scope)) scope[name] = fillString(template, { args, provider: provider.values });
      return scope;
    },
  };
}

/** The arguments that fill a segment of the request's or the lookup's URL path. */
function pathArgsOf(spec: ToolContractSpec): string[] {
  const paths = [spec.request?.path, spec.lookup.by !== 'none' ? spec.lookup.path : undefined].filter((p): p is string => p !== undefined);
  // Only the path itself: a placeholder in the query string fills a parameter, not a segment.
  return [...new Set(paths.flatMap((p) => placeholders(p.split('?')[0])).filter((n) => n.startsWith('args.')).map((n) => n.slice('args.'.length).split('.')[0]!))];
}

/** What the contract says about reconciling and holding its effects. */
function effectPolicy(spec: ToolContractSpec): EffectPolicy {
  // A tool of an upstream MCP server declares its lookup (a read-only upstream tool) under mcp.
  const lookup = spec.mcp ? (spec.mcp.lookup ?? { by: 'none' as const }) : spec.lookup;
  return {
    lookup: lookup.by,
    lookupConsistent: lookup.by !== 'none' && lookup.consistent,
    dedupesByKey: spec.idempotency.kind !== 'none' && spec.idempotency.dedupes,
    settleWindowMs: spec.settleWindowMs,
    resends: spec.resends,
    concurrentTargets: spec.concurrentTargets === true,
    committedPerTarget: spec.committedPerTarget ?? 'many',
    absenceAuditMs: absenceAuditAfterMs(spec),
  };
}

/** Every `{args.x}` / `{provider.x}` a contract uses must exist, so a typo fails at start, not at dispatch. */
function checkPlaceholders(spec: ToolContractSpec, provider: ProviderSpec): void {
  const places: [string, unknown][] = [
    ['target', spec.target],
    ['scope', spec.scope],
  ];
  if (spec.request) places.push(['request.path', spec.request.path], ['request.body', spec.request.body ?? {}]);
  if (spec.mcp) places.push(['mcp.arguments', spec.mcp.arguments ?? {}]);
  if (spec.mcp?.lookup) places.push(['mcp.lookup.arguments', spec.mcp.lookup.arguments]);
  if (spec.lookup.by !== 'none') places.push(['lookup.path', spec.lookup.path]);
  for (const [field, template] of places) {
    for (const name of placeholders(template)) {
      const [root, member] = name.split('.', 2);
      const ok = (root === 'args' && member !== undefined && member in spec.args)
        || (root === 'provider' && member !== undefined && member in provider.values)
        || name === 'key' || name === 'ref';
      if (!ok) throw configError(spec.name, field, `uses {${name}}, which names no ${root === 'provider' ? 'provider value' : 'argument'} (arguments: ${Object.keys(spec.args).join(', ')})`);
    }
  }
  for (const field of spec.businessFields ?? []) {
    if (!(field in spec.args)) throw configError(spec.name, 'businessFields', `names "${field}", which is not an argument (arguments: ${Object.keys(spec.args).join(', ')})`);
  }
  if (spec.reference.kind === 'append') {
    const field = spec.args[spec.reference.field];
    if (!field || (field.type !== 'string' && field.type !== 'text')) throw configError(spec.name, 'reference.field', `must name a string or text argument, not "${spec.reference.field}"`);
  }
  if (spec.idempotency.kind === 'body-field' && !placeholders(spec.request?.body ?? {}).includes('key')) {
    throw configError(spec.name, 'request.body', `must place {key} (the client token) since idempotency.kind is body-field "${spec.idempotency.field}"`);
  }
}

/**
 * An HTTP provider's tool declares `request`; an upstream MCP server's tool declares `mcp` (and
 * its key, reference and lookup there): each mistake named with the field it is about.
 */
function checkKind(spec: ToolContractSpec, providerName: string, provider: ProviderSpec): void {
  if (!isMcpProvider(provider)) {
    if (spec.mcp) throw configError(spec.name, 'mcp', `is for tools of an upstream MCP server, but provider "${providerName}" is an HTTP provider (baseUrl); declare "request" instead`);
    if (!spec.request) throw configError(spec.name, 'request', `is missing: provider "${providerName}" is an HTTP provider, so the tool declares its request (method, path, body)`);
    if (spec.idempotency.kind === 'meta') throw configError(spec.name, 'idempotency.kind', `"meta" (the key in the MCP request's _meta) is for upstream MCP servers; provider "${providerName}" is HTTP: use "header" or "body-field"`);
    return;
  }
  const mcp = spec.mcp;
  if (!mcp) throw configError(spec.name, 'mcp', `is missing: provider "${providerName}" is an upstream MCP server, so the tool names its upstream tool ({ "tool": "…", "arguments": {…}, … })`);
  if (spec.request) throw configError(spec.name, 'request', `does not apply to a tool of an upstream MCP server (provider "${providerName}"): the call is mcp.tool with mcp.arguments`);
  if (spec.idempotency.kind === 'header' || spec.idempotency.kind === 'body-field') throw configError(spec.name, 'idempotency.kind', `must be "meta" (the key in _meta as dev.effectd/idempotencyKey, and in mcp.keyArgument when named) or "none" for a tool of an upstream MCP server, not "${spec.idempotency.kind}"`);
  if (spec.reference.kind !== 'none') throw configError(spec.name, 'reference', 'does not apply to a tool of an upstream MCP server: name the argument the reference goes in as mcp.referenceArgument');
  if (spec.lookup.by !== 'none') throw configError(spec.name, 'lookup', 'does not apply to a tool of an upstream MCP server: declare the read-only upstream tool as mcp.lookup');
  if (spec.receiptPath !== undefined) throw configError(spec.name, 'receiptPath', 'does not apply to a tool of an upstream MCP server: use mcp.receiptPath (a path into the tool result, e.g. structuredContent.id)');
  if (spec.replayHeader !== undefined) throw configError(spec.name, 'replayHeader', 'does not apply to a tool of an upstream MCP server (there are no response headers)');
  if (mcp.keyArgument && spec.idempotency.kind === 'none') throw configError(spec.name, 'mcp.keyArgument', 'needs a key: idempotency.kind is "none", so there is no key to put in it');
  if (mcp.lookup?.by === 'reference' && !mcp.referenceArgument) throw configError(spec.name, 'mcp.lookup.by', 'is "reference", but the reference is stamped nowhere: name mcp.referenceArgument');
  if (mcp.lookup?.by === 'key' && spec.idempotency.kind === 'none') throw configError(spec.name, 'mcp.lookup.by', 'is "key", but idempotency.kind is "none": there is no key to look up by');
  if (mcp.lookup && mcp.lookup.tool === mcp.tool) throw configError(spec.name, 'mcp.lookup.tool', `is the mutating tool "${mcp.tool}" itself: the lookup must be a read-only upstream tool`);
  if (mcp.lookup && !placeholders(mcp.lookup.arguments).includes(mcp.lookup.by === 'key' ? 'key' : 'ref')) {
    throw configError(spec.name, 'mcp.lookup.arguments', `must place {${mcp.lookup.by === 'key' ? 'key' : 'ref'}}: the lookup is by ${mcp.lookup.by}`);
  }
}

export function configError(tool: string, field: string, problem: string): EffectdError {
  return new EffectdError('invalid_config', `invalid configuration: tool "${tool}", field "${field}" ${problem}`, { tool, field });
}
