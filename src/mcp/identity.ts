import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../core/canonical-json.js';
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
  /** Not identity: how long the answer may wait for a lost reply to be settled (src/mcp/wait.ts). */
  waitMs: 'dev.effectd/waitMs',
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
export const IDENTITY_HELP = `the harness sets it in params._meta of tools/call: {"${META.workflowId}": "<one id per task: the thread id kept across resumes>", "${META.step}": "<this call's position in the plan, e.g. 3 or \\"charge\\">"}, optionally "${META.slot}" (one of many effects of one step) and "${META.repeat}": "<why>" for an intended repeat. Keep the same values when you re-issue the call (a new JSON-RPC id is fine): that is how effectd knows it is the same effect. Never take them from the model or from the JSON-RPC id.`;

/**
 * The identity of a call that carries no `dev.effectd/*` identity (`--mcp-identity-fallback`,
 * EFFECTD_MCP_IDENTITY_FALLBACK; `content` by default, chosen by the benchmark's no-identity lane,
 * docs/mcp.md). `_meta` always wins field by field; the fallback only fills what it lacks.
 * - `content` (the default): the workflow from the credential and a time window, the step from the
 *   call's content (tool and arguments). A re-issued identical call within the window is the same
 *   effect (a reply lost anywhere costs no second charge). An identical call meant as a second
 *   effect must say so in the tool's `effectd_repeat` argument (src/mcp/repeat-argument.ts), which
 *   the model fills; undeclared, it is ONE effect (false dedup).
 * - `header`: workflowId and step from configured HTTP headers (Streamable HTTP only), for clients
 *   that can set headers but not `_meta`. As safe as `_meta`: the client still names its effect.
 * - off: refused, with what to send.
 */
export type IdentityFallback =
  | { mode: 'header'; workflowHeader: string; stepHeader: string }
  | { mode: 'content'; windowMs: number };

export const DEFAULT_FALLBACK_HEADERS = { workflowHeader: 'x-effectd-workflow-id', stepHeader: 'x-effectd-step' } as const;
export const DEFAULT_FALLBACK_WINDOW_MS = 3_600_000;

/** Where an effect's identity came from, said in the answer when it is not `_meta`. */
export type IdentitySource = 'meta' | 'header' | 'content';

/** The false-dedup risk of the content fallback, said in docs/mcp.md, the refusal and each answer it identifies. */
export const CONTENT_FALLBACK_RISK = 'identical calls (same tool, same arguments) within the window are ONE effect: a re-issue is absorbed, and so is a repeat meant as a second effect unless the call says so in its effectd_repeat argument (else a false dedup)';

/** The operator's options, said in every identity refusal. */
export const FALLBACK_HELP = `A client that cannot set _meta: this effectd was started with --mcp-identity-fallback off; the operator can use content (the default: workflow from the credential and a time window, step from the call's content; risk: ${CONTENT_FALLBACK_RISK}) or header (workflowId and step from the HTTP headers ${DEFAULT_FALLBACK_HEADERS.workflowHeader} and ${DEFAULT_FALLBACK_HEADERS.stepHeader}).`;

/** Parses `--mcp-identity-fallback` and its companions into a fallback (undefined: off). */
export function identityFallbackOption(values: { mode?: unknown; workflowHeader?: unknown; stepHeader?: unknown; windowMs?: unknown }): IdentityFallback | undefined {
  const mode = values.mode;
  if (mode === undefined || mode === false || mode === 'off' || mode === 'none') return undefined;
  if (mode === 'header') {
    const header = (value: unknown, fallback: string) => {
      const name = value === undefined ? fallback : String(value).toLowerCase();
      if (!/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) throw new EffectdError('invalid_config', `--mcp-*-header "${String(value)}" is not an HTTP header name`);
      return name;
    };
    return { mode: 'header', workflowHeader: header(values.workflowHeader, DEFAULT_FALLBACK_HEADERS.workflowHeader), stepHeader: header(values.stepHeader, DEFAULT_FALLBACK_HEADERS.stepHeader) };
  }
  if (mode === 'content') {
    const windowMs = values.windowMs === undefined ? DEFAULT_FALLBACK_WINDOW_MS : Number(values.windowMs);
    if (!Number.isInteger(windowMs) || windowMs < 1_000) throw new EffectdError('invalid_config', `--mcp-identity-window-ms must be a whole number of milliseconds ≥ 1000, not ${String(values.windowMs)}`);
    return { mode: 'content', windowMs };
  }
  throw new EffectdError('invalid_config', `--mcp-identity-fallback is content (the default), header or off, not "${String(mode)}"`);
}

/** What the transport read for the fallback: the configured headers' values (Streamable HTTP). */
export interface FallbackInput {
  headers?: { workflowId?: string; step?: string };
}

/**
 * `_meta` with what the fallback fills in (or `_meta` as is when the fallback is off or `_meta`
 * already names the effect). The result is validated by identityFrom like any `_meta`.
 */
export function withFallback(
  meta: Record<string, unknown> | undefined,
  fallback: IdentityFallback | undefined,
  input: FallbackInput,
  call: { credential: string; tool: string; args: unknown; now: number; repeat?: string; thread?: string },
): { meta: Record<string, unknown>; source: IdentitySource } {
  const given = meta ?? {};
  const missing = given[META.workflowId] === undefined || given[META.step] === undefined;
  if (!fallback || !missing) return { meta: given, source: 'meta' };
  if (fallback.mode === 'header') {
    const { workflowId, step } = input.headers ?? {};
    if (workflowId === undefined && step === undefined) return { meta: given, source: 'meta' };
    return { meta: { ...(workflowId !== undefined ? { [META.workflowId]: workflowId } : {}), ...(step !== undefined ? { [META.step]: step } : {}), ...given }, source: 'header' };
  }
  const windowStart = Math.floor(call.now / fallback.windowMs) * fallback.windowMs;
  const digest = contentDigest(call.tool, call.args, call.repeat);
  const step = `content-${digest}`;
  const repeat = call.repeat !== undefined && given[META.repeat] === undefined ? { [META.repeat]: call.repeat } : {};
  return { meta: { [META.workflowId]: contentWorkflowId(call.credential, windowStart, call.tool, digest, call.thread), [META.step]: step, ...repeat, ...given }, source: 'content' };
}

/** The step of a content identity: the tool, its arguments and (a declared repeat) the reason the model gave. */
function contentDigest(tool: string, args: unknown, repeat: string | undefined): string {
  return createHash('sha256').update(canonicalJson({ tool, args: args ?? {}, ...(repeat !== undefined ? { repeat } : {}) })).digest('hex').slice(0, 24);
}

/**
 * The workflow of a content identity: the credential, the client's conversation where it names one
 * (Codex's `_meta.threadId`, threadFrom), and the window it starts in.
 */
function contentWorkflowId(credential: string, windowStart: number, tool: string, digest: string, thread?: string): string {
  const scope = thread === undefined ? '' : `-thread-${createHash('sha256').update(thread).digest('hex').slice(0, 16)}`;
  // A saga is one per workflow, so each saga's content is its own workflow in the window.
  return `mcp-content-${credential}${scope}-${new Date(windowStart).toISOString()}${tool.startsWith('saga:') ? `-${digest}` : ''}`;
}

/**
 * The client's conversation, where it sends one without `dev.effectd/*` identity: Codex puts its
 * thread id (kept across resumes) in `_meta.threadId`. It narrows a content identity to that
 * conversation: identical calls in two conversations are two effects (each still held by the
 * workflow's content index only within its own conversation).
 */
export function threadFrom(meta: Record<string, unknown> | undefined): string | undefined {
  const thread = meta?.['threadId'];
  return typeof thread === 'string' && thread.length > 0 && thread.length <= 256 ? thread : undefined;
}

/**
 * The window slides: a content identity whose step was declared in the previous window is that
 * effect, not a new one in this window, so a re-issue that crosses a window boundary is still the
 * same effect (an identical call is one effect for one to two windows). `declared` says whether
 * (workflow, step) is in the ledger.
 */
export async function slidWindow(
  filled: { meta: Record<string, unknown>; source: IdentitySource },
  fallback: IdentityFallback | undefined,
  call: { credential: string; tool: string; now: number; thread?: string },
  declared: (workflowId: string, step: string) => Promise<boolean>,
): Promise<{ meta: Record<string, unknown>; source: IdentitySource }> {
  if (filled.source !== 'content' || fallback?.mode !== 'content') return filled;
  const step = String(filled.meta[META.step]);
  const digest = step.slice('content-'.length);
  const windowStart = Math.floor(call.now / fallback.windowMs) * fallback.windowMs;
  // Only a workflow the fallback derived slides; one the caller named in _meta stays as named.
  if (filled.meta[META.workflowId] !== contentWorkflowId(call.credential, windowStart, call.tool, digest, call.thread)) return filled;
  const previous = contentWorkflowId(call.credential, windowStart - fallback.windowMs, call.tool, digest, call.thread);
  return (await declared(previous, step)) ? { meta: { ...filled.meta, [META.workflowId]: previous }, source: 'content' } : filled;
}

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

/** What a refusal says about the fallback: how to turn it on, or (when on) what this effectd reads. */
export function fallbackHelp(fallback: IdentityFallback | undefined): string {
  if (fallback?.mode === 'header') return `This effectd also takes them from the HTTP headers ${fallback.workflowHeader} and ${fallback.stepHeader} (--mcp-identity-fallback header): send both, or set _meta.`;
  return FALLBACK_HELP;
}

/**
 * A call of a configured tool must name its effect: workflowId and step (a saga start: its
 * workflowId). Every such call is an effect in the ledger, a `read` contract's too; only the
 * sentence differs, since a read changes nothing in the world.
 */
export function requireIdentity(identity: McpIdentity, tool: string, needsStep: boolean, fallback?: IdentityFallback, reversibility?: string): { workflowId: string; step?: string } {
  const missing = [...(identity.workflowId === undefined ? [META.workflowId] : []), ...(needsStep && identity.step === undefined ? [META.step] : [])];
  if (missing.length > 0) {
    const why = reversibility === 'read' ? `${tool} is a read (it changes nothing), but effectd records each call of it as an effect in its ledger` : `${tool} changes the world`;
    throw new EffectdError('invalid_command', `${why}, so effectd needs the effect's identity and refuses without it (nothing was sent): missing ${missing.map((m) => `_meta["${m}"]`).join(' and ')}; ${IDENTITY_HELP} ${fallbackHelp(fallback)}`, {
      fields: missing.map((m) => ({ path: `_meta["${m}"]`, message: 'required' })),
      missingIdentity: missing,
    });
  }
  return { workflowId: identity.workflowId!, ...(identity.step !== undefined ? { step: identity.step } : {}) };
}
