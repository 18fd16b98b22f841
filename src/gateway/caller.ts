import { tenantField } from '../core/effect-command.js';
import { EffectdError, invalidCommand } from '../core/errors.js';
import type { Principal } from '../runtime/credentials.js';

/** The front door a call came through. */
export type Ingress = 'http' | 'kafka' | 'mcp' | 'cli';

/**
 * Who is calling, as authentication established it: the credential's name, role and tenant, and
 * the ingress. Never built from a payload; a payload's "principal" is at most an on-behalf-of label.
 */
export interface Caller extends Principal {
  ingress: Ingress;
}

export function callerOf(principal: Principal, ingress: Ingress): Caller {
  // Object.assign, not a spread: a spread adding `ingress` costs microseconds on Node 20 (see settle in src/core/fold.ts), once per request.
  return Object.assign({}, principal, { ingress });
}

export function canSeeTenant(caller: Principal, tenant: string): boolean {
  return caller.tenant === '*' || caller.tenant === tenant;
}

/**
 * The tenant a call acts on: the caller's own. A tenant named in the request is only a choice
 * among those the caller may act for (operators with `*`), never an authority: another one is forbidden.
 */
export function tenantOf(caller: Caller, requested?: unknown): string {
  if (requested !== undefined && typeof requested !== 'string') {
    throw new EffectdError('invalid_command', 'tenant must be a string (or left out: it is the caller\'s own)', { fields: [{ path: 'tenant', message: 'expected a string' }] });
  }
  if (requested !== undefined) {
    const parsed = tenantField.safeParse(requested);
    if (!parsed.success) throw invalidCommand('invalid tenant', parsed.error.issues, ['tenant']);
  }
  const tenant = requested ?? (caller.tenant === '*' ? 'default' : caller.tenant);
  if (!canSeeTenant(caller, tenant)) throw new EffectdError('forbidden', `${caller.name} may only act for tenant ${caller.tenant}, not ${tenant}`, { tenant });
  return tenant;
}
