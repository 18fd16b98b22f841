import { z } from 'zod';
import { IDENTIFIER_MAX, identifierForm, identifierProblem, type IdentifierField } from './identifiers.js';

export { isWellFormedText } from './identifiers.js';

/** What a value is, for messages that say what was sent instead. */
export function describeInput(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  if (typeof value === 'number') return String(value);
  return `a ${typeof value}`;
}

/** A name (tenant, tool, workflowId, …): a string held to the one identifier rule (src/core/identifiers.ts). */
export function identifierField(name: IdentifierField, max: number = IDENTIFIER_MAX[name], required = `${name} is required`) {
  // min and max as zod checks too, so JSON Schema (the OpenAPI document) carries them; the rest of the rule is the refinement.
  return z.string({ error: (issue) => (issue.input === undefined ? required : `${name} must be a string, not ${describeInput(issue.input)}`) })
    .min(1, identifierProblem(name, '', max)!).max(max, `${name} is at most ${max} characters: ${identifierForm(name, max)}`)
    .superRefine((value, ctx) => {
      const problem = value === '' || value.length > max ? undefined : identifierProblem(name, value, max);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

/** A position (step, slot): a whole number ≥ 0 or a name held to the identifier rule; numbers become their decimal text. */
function positionField(name: 'step' | 'slot', example: string, required: string) {
  return z.union([
    identifierField(name),
    z.number().int().nonnegative().transform(String),
  ], { error: (issue) => (issue.input === undefined ? required : `${name} must be a whole number ≥ 0 or a name (${example}), not ${describeInput(issue.input)}`) });
}

/** The one definition of a workflowId, for every path that takes one (body or URL, every ingress). */
export const workflowIdField = identifierField('workflowId', IDENTIFIER_MAX.workflowId, 'workflowId is required: it comes from the harness, one per task (the thread or conversation id its checkpointer keeps across resumes, not a run or process id made at start)');
export const stepField = positionField('step', 'e.g. 3 or "charge"', 'step is required: the position of this effect in the workflow plan (e.g. 3 or "charge")');
export const slotField = positionField('slot', 'e.g. 0 or "alice@example.com"', 'slot is required');
export const tenantField = identifierField('tenant');
export const toolField = identifierField('tool', IDENTIFIER_MAX.tool, 'tool is required');

/**
 * Keys JavaScript gives a meaning of their own. A parser or merge that honours them pollutes
 * prototypes; one that drops them (as zod records do) changes the arguments without a word. So
 * they are refused, wherever they appear inside args or input.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The paths of reserved keys anywhere in a JSON value, the first `limit` of them. Iterative, with
 * parent links instead of copied paths, so any nesting depth costs time linear in the value.
 */
export function reservedKeyPaths(value: unknown, limit = 20): string[][] {
  type Node = { key: string; parent: Node | undefined } | undefined;
  const pathOf = (node: Node): string[] => {
    const path: string[] = [];
    for (let n = node; n; n = n.parent) path.push(n.key);
    return path.reverse();
  };
  const found: string[][] = [];
  const pending: [unknown, Node][] = [[value, undefined]];
  while (pending.length > 0 && found.length < limit) {
    const [node, at] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      node.forEach((item, i) => pending.push([item, { key: String(i), parent: at }]));
      continue;
    }
    for (const key of Object.keys(node)) {
      if (RESERVED_KEYS.has(key)) found.push(pathOf({ key, parent: at }));
      else pending.push([(node as Record<string, unknown>)[key], { key, parent: at }]);
    }
  }
  return found.slice(0, limit);
}

/** Adds one issue per reserved key (see RESERVED_KEYS), at its path. */
export function refuseReservedKeys(value: unknown, ctx: z.RefinementCtx): void {
  for (const path of reservedKeyPaths(value)) {
    ctx.addIssue({ code: 'custom', path, message: `"${path[path.length - 1]}" is not accepted as a key: JavaScript gives it a special meaning, so it could be dropped or misread; rename it` });
  }
}

/**
 * A tool's arguments: a JSON object, passed on as the very object received (not a copy), so what
 * the ingress knows about how its numbers were written (src/core/json-number-literals.ts) reaches
 * the tool's schema.
 */
export const argsField = z
  .custom<Record<string, unknown>>((value) => value !== null && typeof value === 'object' && !Array.isArray(value), {
    error: (issue) => (issue.input === undefined ? 'args is required: an object of the tool\'s arguments (e.g. {"invoiceId": "INV-1", "amount": 4900})' : `args must be an object of the tool's arguments, not ${describeInput(issue.input)}`),
  })
  .superRefine(refuseReservedKeys);

/** An effect command as agents and harnesses submit it (HTTP body, Kafka message value). */
export const effectCommand = z.object({
  /** At most a request: the tenant is the caller's, and naming another one is refused (forbidden). */
  tenant: tenantField.optional(),
  workflowId: workflowIdField,
  step: stepField,
  slot: slotField.default('0'),
  tool: toolField,
  args: argsField,
  /** A labelled on-behalf-of claim (e.g. the end user); the actor is always the authenticated caller. */
  principal: z.string().max(256).optional(),
  repeat: z.object({ reason: z.string().min(1, 'a declared repeat needs a reason') }).strict().optional(),
  correlationId: z.string().max(256).optional(),
  // The rest mirrors proto/effectd/v1/effectd.proto, so one JSON document fits every ingress.
  approval: z.object({
    approvalId: z.string().max(256).optional(),
    approvedBy: z.string().max(256).optional(),
    policyGeneration: z.number().int().nonnegative().optional(),
  }).strict().optional(),
  saga: z.object({
    sagaId: z.string().min(1).max(256),
    saga: z.string().max(128).optional(),
    sagaStep: z.string().max(128).optional(),
  }).strict().optional(),
  replyTopic: z.string().regex(/^[a-zA-Z0-9._-]{1,249}$/, 'replyTopic must be a Kafka topic name').optional(),
  trace: z.object({ traceparent: z.string().max(512).optional(), tracestate: z.string().max(512).optional() }).strict().optional(),
}).strict();

export type EffectCommandInput = z.input<typeof effectCommand>;
export type EffectCommand = z.output<typeof effectCommand>;
