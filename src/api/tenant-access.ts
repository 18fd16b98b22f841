import { EffectdError } from '../core/errors.js';
import { canSeeTenant, type Principal } from '../runtime/credentials.js';

/** The tenant a request acts on: the one asked for, else the caller's own; 403 when it isn't theirs. */
export function tenantFor(principal: Principal, requested?: string): string {
  const tenant = requested ?? (principal.tenant === '*' ? 'default' : principal.tenant);
  if (!canSeeTenant(principal, tenant)) throw new EffectdError('forbidden', `${principal.name} may only act for tenant ${principal.tenant}`);
  return tenant;
}
