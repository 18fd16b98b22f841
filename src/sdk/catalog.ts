import { EffectdError } from '../core/errors.js';

/**
 * A tool of effectd's catalog (`GET /v1/tools`) as a framework adapter needs it: what the model is
 * told it does, and the JSON Schema (2020-12) of its arguments.
 */
export interface CatalogTool {
  /** effectd's name, e.g. `payments.charge`: what an effect command names. */
  name: string;
  description: string;
  reversibility: 'read' | 'idempotent' | 'compensable' | 'irreversible';
  /** JSON Schema (2020-12) of the tool's `args`. */
  argsSchema: Record<string, unknown>;
}

/**
 * The name the model calls a tool by: effectd's name with every character a model API refuses in a
 * function name (OpenAI, Anthropic: `^[a-zA-Z0-9_-]{1,64}$`) written `_` — `payments.charge` is
 * `payments_charge`.
 */
export function modelToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/**
 * The catalog's tools an adapter offers: those named (in that order; a name not in the catalog is a
 * mistake of the harness and throws), or every tool but the `read` ones when none are named.
 */
export function selectTools(catalog: readonly CatalogTool[], names?: readonly string[]): CatalogTool[] {
  if (!names) return catalog.filter((t) => t.reversibility !== 'read');
  return names.map((name) => {
    const found = catalog.find((t) => t.name === name);
    if (!found) throw new EffectdError('unknown_tool', `effectd has no tool "${name}" (its catalog: ${catalog.map((t) => t.name).join(', ') || 'empty'})`, { tool: name });
    return found;
  });
}
