import { z } from 'zod';
import { slotField, stepField, tenantField, workflowIdField } from '../core/effect-command.js';
import { EffectdError } from '../core/errors.js';

/**
 * The effect's identity over MCP: set by the harness in the request's `_meta`, never by the model
 * (not an argument it writes) and never the JSON-RPC id (a re-issued call carries a new id, and
 * must still be the same effect).
 */
export const META = {
  workflowId: 'dev.effectd/workflowId',
  step: 'dev.effectd/step',
  slot: 'dev.effectd/slot',
  repeat: 'dev.effectd/repeat',
  tenant: 'dev.effectd/tenant',
  principal: 'dev.effectd/principal',
} as const;

export interface McpIdentity {
  workflowId?: string;
  step?: string;
  slot?: string;
  /** A declared repeat: the reason the same content is wanted again, as a new effect. */
  repeat?: { reason: string };
  /** At most a choice among the tenants the credential may act for (as the HTTP body's tenant). */
  tenant?: string;
  /** A labelled on-behalf-of claim (the end user); the actor is always the authenticated caller. */
  principal?: string;
}

const repeatField = z.union([
  z.string().min(1, 'a declared repeat needs a reason').transform((reason) => ({ reason })),
  z.object({ reason: z.string().min(1, 'a declared repeat needs a reason') }).strict(),
], { error: `_meta["${META.repeat}"] is the reason for a declared repeat: a non-empty string (or {"reason": "…"})` });

const identitySchema = z.object({
  [META.workflowId]: workflowIdField.optional(),
  [META.step]: stepField.optional(),
  [META.slot]: slotField.optional(),
  [META.repeat]: repeatField.optional(),
  [META.tenant]: tenantField.optional(),
  [META.principal]: z.string().max(256).optional(),
});

/** What the harness must send, said once for every refusal. */
export const IDENTITY_HELP = `the harness sets it in params._meta of tools/call: {"${META.workflowId}": "<one id per agent run>", "${META.step}": "<this call's position in the plan, e.g. 3 or \\"charge\\">"}, optionally "${META.slot}" (one of many effects of one step) and "${META.repeat}": "<why>" for an intended repeat. Keep the same values when you re-issue the call (a new JSON-RPC id is fine): that is how effectd knows it is the same effect. Never take them from the model or from the JSON-RPC id.`;

/** The identity in a request's `_meta` (every field optional here; what a tool needs is checked by it). */
export function identityFrom(meta: Record<string, unknown> | undefined): McpIdentity {
  const parsed = identitySchema.safeParse(meta ?? {});
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => ({ path: `_meta["${String(i.path[0] ?? '')}"]`, message: i.message }));
    throw new EffectdError('invalid_command', `the effect's identity in _meta is malformed: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}; ${IDENTITY_HELP}`, { fields });
  }
  const d = parsed.data;
  return {
    ...(d[META.workflowId] !== undefined ? { workflowId: d[META.workflowId] } : {}),
    ...(d[META.step] !== undefined ? { step: d[META.step] } : {}),
    ...(d[META.slot] !== undefined ? { slot: d[META.slot] } : {}),
    ...(d[META.repeat] !== undefined ? { repeat: d[META.repeat] } : {}),
    ...(d[META.tenant] !== undefined ? { tenant: d[META.tenant] } : {}),
    ...(d[META.principal] !== undefined ? { principal: d[META.principal] } : {}),
  };
}

/** A mutating call must name its effect: workflowId and step (a saga start: its workflowId). */
export function requireIdentity(identity: McpIdentity, tool: string, needsStep: boolean): { workflowId: string; step?: string } {
  const missing = [...(identity.workflowId === undefined ? [META.workflowId] : []), ...(needsStep && identity.step === undefined ? [META.step] : [])];
  if (missing.length > 0) {
    throw new EffectdError('invalid_command', `${tool} changes the world, so effectd needs the effect's identity and refuses without it (nothing was sent): missing ${missing.map((m) => `_meta["${m}"]`).join(' and ')}; ${IDENTITY_HELP}`, {
      fields: missing.map((m) => ({ path: `_meta["${m}"]`, message: 'required' })),
      missingIdentity: missing,
    });
  }
  return { workflowId: identity.workflowId!, ...(identity.step !== undefined ? { step: identity.step } : {}) };
}
