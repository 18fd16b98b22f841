import { readPath } from '../core/classify.js';

/** What a template can name: `{args.amount}`, `{provider.account}`, `{key}`, `{ref}`. */
export interface TemplateContext {
  args: Record<string, unknown>;
  provider: Record<string, string>;
  key?: string | null;
  ref?: string;
  /** The receipt of an object being undone (a tool's `undo`). */
  receipt?: string;
}

const PLACEHOLDER = /\{([a-zA-Z0-9_.]+)\}/g;
const WHOLE = /^\{([a-zA-Z0-9_.]+)\}$/;

function resolve(name: string, context: TemplateContext): unknown {
  if (name === 'key') return context.key ?? undefined;
  if (name === 'ref') return context.ref;
  if (name === 'receipt') return context.receipt;
  return readPath(context, name);
}

/** Every placeholder a template uses, for validating a contract before anything runs. */
export function placeholders(template: unknown): string[] {
  if (typeof template === 'string') return [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  if (Array.isArray(template)) return template.flatMap(placeholders);
  if (template && typeof template === 'object') return Object.values(template).flatMap(placeholders);
  return [];
}

/** Fills a string template; `encode` percent-encodes substituted values (for URL paths and queries). */
export function fillString(template: string, context: TemplateContext, encode = false): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const value = resolve(name, context);
    const text = value === undefined || value === null ? '' : String(value);
    return encode ? encodeURIComponent(text) : text;
  });
}

/**
 * Fills a JSON body template. A string that is exactly one placeholder keeps the value's type
 * (an amount stays a number) and is dropped when the value is absent.
 */
export function fillJson(template: unknown, context: TemplateContext): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template);
    return whole ? resolve(whole[1]!, context) : fillString(template, context);
  }
  if (Array.isArray(template)) return template.map((t) => fillJson(t, context)).filter((v) => v !== undefined);
  if (template && typeof template === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(template)) {
      const filled = fillJson(v, context);
      if (filled !== undefined) out[k] = filled;
    }
    return out;
  }
  return template;
}
