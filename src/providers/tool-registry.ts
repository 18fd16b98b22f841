import type { z } from 'zod';
import { argsSchema, type CanonicalArgs } from '../core/arg-fields.js';
import type { ClassificationRules } from '../core/classify.js';
import { EffectdError } from '../core/errors.js';
import type { ProviderScope } from '../core/identity.js';
import type { KeyPolicy } from '../core/shell-decision.js';
import { fillString, placeholders } from './templates.js';
import type { EffectdConfig, ProviderSpec, ToolContractSpec } from './tool-contract.js';

/** A tool's contract, compiled: ready to canonicalize arguments and build requests. */
export interface Tool {
  readonly name: string;
  readonly spec: ToolContractSpec;
  readonly provider: ProviderSpec & { name: string };
  readonly schema: z.ZodType<CanonicalArgs>;
  readonly classification: ClassificationRules;
  readonly keyPolicy: KeyPolicy;
  /** How long the provider protects a key, or null when the tool has none. */
  readonly keyRetentionMs: number | null;
  target(args: CanonicalArgs): string;
  scope(args: CanonicalArgs): ProviderScope;
}

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  constructor(config: EffectdConfig) {
    for (const spec of config.tools) {
      if (this.tools.has(spec.name)) throw configError(spec.name, 'name', 'is declared twice');
      const provider = config.providers[spec.provider];
      if (!provider) throw configError(spec.name, 'provider', `names provider "${spec.provider}", which is not in "providers" (known: ${Object.keys(config.providers).join(', ') || 'none'})`);
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
    schema: argsSchema(spec.args),
    classification: {
      receiptPath: spec.receiptPath, replayHeader: spec.replayHeader, overrides: spec.classify,
      storedFailures: spec.idempotency.kind === 'none' ? 'replayed' : spec.idempotency.storedFailures,
    },
    keyPolicy: { dedupesByKey: spec.idempotency.kind !== 'none' && spec.idempotency.dedupes },
    keyRetentionMs: keyed && spec.idempotency.kind !== 'none' ? spec.idempotency.retentionMs : null,
    target: (args) => fillString(spec.target, { args, provider: provider.values }),
    scope: (args) => {
      const scope: ProviderScope = { provider: provider.name, endpoint: `${spec.request.method} ${spec.request.path}` };
      for (const [name, template] of Object.entries(spec.scope)) scope[name] = fillString(template, { args, provider: provider.values });
      return scope;
    },
  };
}

/** Every `{args.x}` / `{provider.x}` a contract uses must exist, so a typo fails at start, not at dispatch. */
function checkPlaceholders(spec: ToolContractSpec, provider: ProviderSpec): void {
  const places: [string, unknown][] = [
    ['request.path', spec.request.path],
    ['request.body', spec.request.body ?? {}],
    ['target', spec.target],
    ['scope', spec.scope],
  ];
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
  if (spec.idempotency.kind === 'body-field' && !placeholders(spec.request.body ?? {}).includes('key')) {
    throw configError(spec.name, 'request.body', `must place {key} (the client token) since idempotency.kind is body-field "${spec.idempotency.field}"`);
  }
}

export function configError(tool: string, field: string, problem: string): EffectdError {
  return new EffectdError('invalid_config', `invalid configuration: tool "${tool}", field "${field}" ${problem}`, { tool, field });
}
