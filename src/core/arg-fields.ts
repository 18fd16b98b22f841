import { z } from 'zod';
import { writtenAs } from './json-number-literals.js';
import { AMOUNT_FORMS_PLAIN, parseMinorUnits, writtenNumberReason } from './money.js';

/**
 * The vocabulary a tool uses to declare its arguments (in code or in a JSON config file).
 * Each kind canonicalizes: "  Hello   world " and "Hello world" are one subject, 4900 and
 * "49.00" one amount, so the intent digest only changes when the business meaning does.
 */
const common = {
  optional: z.boolean().optional(),
  description: z.string().optional(),
};

export const argFieldSpec = z.discriminatedUnion('type', [
  z.object({ type: z.literal('string'), ...common, default: z.string().optional(), minLength: z.number().int().nonnegative().optional(), maxLength: z.number().int().positive().optional(), pattern: z.string().optional(), lowercase: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('text'), ...common, default: z.string().optional(), maxLength: z.number().int().positive().optional() }).strict(),
  z.object({ type: z.literal('email'), ...common, default: z.string().optional() }).strict(),
  // An amount is more than zero (a charge or refund of nothing is no effect to carry out), unless the contract says `allowZero`.
  z.object({ type: z.literal('money'), ...common, currencyField: z.string().optional(), allowZero: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('currency'), ...common, default: z.string().length(3).optional() }).strict(),
  z.object({ type: z.literal('integer'), ...common, default: z.number().int().optional(), min: z.number().int().optional(), max: z.number().int().optional() }).strict(),
  z.object({ type: z.literal('boolean'), ...common, default: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('enum'), ...common, values: z.array(z.string()).min(1), default: z.string().optional() }).strict(),
  z.object({ type: z.literal('map'), ...common }).strict(),
]);
export type ArgFieldSpec = z.infer<typeof argFieldSpec>;
export type ArgFieldsSpec = Record<string, ArgFieldSpec>;

export type CanonicalArgs = Record<string, unknown>;

const collapse = (s: string) => s.trim().replace(/\s+/g, ' ');

function fieldSchema(name: string, spec: ArgFieldSpec): z.ZodType {
  switch (spec.type) {
    case 'string': {
      let inner = z.string();
      if (spec.minLength !== undefined) inner = inner.min(spec.minLength);
      if (spec.maxLength !== undefined) inner = inner.max(spec.maxLength);
      if (spec.pattern !== undefined) inner = inner.regex(new RegExp(spec.pattern), `${name} must match ${spec.pattern}`);
      const s = z.string().transform((v) => (spec.lowercase ? collapse(v).toLowerCase() : collapse(v))).pipe(inner);
      return withDefault(s, spec.default, spec.optional);
    }
    case 'text': {
      let inner = z.string();
      if (spec.maxLength !== undefined) inner = inner.max(spec.maxLength);
      return withDefault(z.string().transform((v) => v.trim()).pipe(inner), spec.default, spec.optional);
    }
    case 'email':
      return withDefault(z.string().transform((v) => v.trim().toLowerCase()).pipe(z.email(`${name} must be an email address`)), spec.default, spec.optional);
    case 'currency':
      return withDefault(z.string().transform((v) => v.trim().toLowerCase()).pipe(z.string().regex(/^[a-z]{3}$/, `${name} must be a 3-letter ISO currency code`)), spec.default, spec.optional);
    case 'money': {
      // Any value gets through to the object level, where it is resolved against the currency
      // field and refused with what is really wrong (parseMinorUnits), never "is required".
      const amount = z.unknown();
      return spec.optional ? amount.optional() : amount.refine((v) => v !== undefined, `${name} is required: ${AMOUNT_FORMS_PLAIN}`);
    }
    case 'integer': {
      let inner = z.number().int();
      if (spec.min !== undefined) inner = inner.min(spec.min);
      if (spec.max !== undefined) inner = inner.max(spec.max);
      const s = z.union([z.number(), z.string().trim().regex(/^-?[0-9]+$/).transform(Number)]).pipe(inner);
      return withDefault(s, spec.default, spec.optional);
    }
    case 'boolean':
      return withDefault(z.boolean(), spec.default, spec.optional);
    case 'enum':
      return withDefault(z.string().transform((v) => v.trim()).pipe(z.enum(spec.values as [string, ...string[]])), spec.default, spec.optional);
    case 'map': {
      const s = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform((v) => collapse(String(v))));
      return spec.optional ? s.optional() : s;
    }
  }
}

function withDefault<T>(schema: z.ZodType<T>, fallback: T | undefined, optional: boolean | undefined): z.ZodType {
  if (fallback !== undefined) return schema.optional().transform((v) => (v === undefined ? fallback : v));
  return optional ? schema.optional() : schema;
}

/** Builds the canonicalizing schema of a tool's arguments from its declared fields. */
/**
 * Why a value cannot fill one URL path segment, or undefined when it can. Placeholders are
 * percent-encoded, which leaves dots: the URL parser then removes `.` and `..` segments, so such an
 * argument would retarget the request on the same provider (`/accounts/{id}/charges` → `/charges`).
 * Their percent-encoded forms are refused too (a provider or proxy may decode once more).
 */
export function pathSegmentProblem(value: unknown): string | undefined {
  let text = value === undefined || value === null ? '' : String(value);
  for (let i = 0; i < 3; i++) {
    if (text === '') return 'is empty, and it fills a segment of the request\'s URL path';
    if (text === '.' || text === '..') return `is "${String(value)}", a dot segment the URL would resolve away (it fills one segment of the request's URL path)`;
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      return undefined;
    }
    if (decoded === text) return undefined;
    text = decoded;
  }
  return undefined;
}

/** `pathArgs`: the arguments that fill a segment of a request's URL path (refused empty, `.` or `..`). */
export function argsSchema(fields: ArgFieldsSpec, pathArgs: readonly string[] = []): z.ZodType<CanonicalArgs> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, spec] of Object.entries(fields)) shape[name] = fieldSchema(name, spec);
  const moneyFields = Object.entries(fields).filter(([, spec]) => spec.type === 'money') as [string, Extract<ArgFieldSpec, { type: 'money' }>][];
  const object = z
    .object(shape)
    .strict()
    .transform((args, ctx) => {
      const out: CanonicalArgs = { ...args };
      // An argument fills exactly one path segment: never empty, never a dot segment.
      for (const name of pathArgs) {
        const problem = pathSegmentProblem(args[name]);
        if (problem) ctx.addIssue({ code: 'custom', path: [name], message: `${name} ${problem}` });
      }
      for (const [name, spec] of moneyFields) {
        const raw = args[name];
        if (raw === undefined) continue;
        const currency = spec.currencyField ? (args[spec.currencyField] as string | undefined) : undefined;
        if (raw instanceof WrittenNumber) {
          ctx.addIssue({ code: 'custom', path: [name], message: writtenNumberReason(raw.literal, raw.value, currency) });
          continue;
        }
        const parsed = parseMinorUnits(raw, currency);
        if (!parsed.ok) {
          ctx.addIssue({ code: 'custom', path: [name], message: parsed.reason });
          continue;
        }
        if (parsed.minor === 0 && spec.allowZero !== true) {
          ctx.addIssue({ code: 'custom', path: [name], message: `${name} must be more than zero (got ${JSON.stringify(raw)}): an amount of nothing is not an effect to carry out (a contract whose ${name} may be zero says "allowZero": true)` });
          continue;
        }
        if (parsed.currency && currency && parsed.currency !== currency) {
          ctx.addIssue({ code: 'custom', path: [name], message: `${name} is in ${parsed.currency.toUpperCase()} but ${spec.currencyField} is ${currency.toUpperCase()}` });
          continue;
        }
        out[name] = parsed.minor;
      }
      return out;
    });
  if (moneyFields.length === 0) return object as unknown as z.ZodType<CanonicalArgs>;
  // A money field whose JSON number was written 49.00 (known where the ingress kept the text) is
  // handed to the object as a WrittenNumber, so it is refused, not read as 49 minor units.
  return z.preprocess((raw) => {
    const literals = moneyFields.flatMap(([name]) => {
      const literal = writtenAs(raw, name);
      return literal === undefined ? [] : [[name, new WrittenNumber(literal, (raw as Record<string, number>)[name]!)] as const];
    });
    return literals.length === 0 ? raw : { ...(raw as Record<string, unknown>), ...Object.fromEntries(literals) };
  }, object) as unknown as z.ZodType<CanonicalArgs>;
}

/** A JSON number written with a decimal point or an exponent that reads as a whole number (49.00). */
class WrittenNumber {
  constructor(readonly literal: string, readonly value: number) {}
}
