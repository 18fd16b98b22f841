import { tenantField } from '../core/effect-command.js';
import { EffectdError, invalidCommand } from '../core/errors.js';

/**
 * Who a credential is, as authentication establishes it: its name, role and the tenant it acts for
 * (`*`: every tenant). The credential book (src/runtime/credentials.ts) answers these; the gateway
 * needs nothing else of it.
 */
export interface Principal {
  name: string;
  role: 'agent' | 'operator';
  tenant: string;
  /** Kafka reply topics the credential may have outcomes written to, besides the ingress's own (src/transport/kafka/reply-topic.ts). */
  replyTopicPrefix?: string | undefined;
}

/** The front door a call came through. */
export type Ingress = 'http' | 'kafka' | 'mcp' | 'cli';

/**
 * Who is calling, as authentication established it: the credential's name, role and tenant, and
 * the ingress. Never built from a payload; a payload's "principal" is at most an on-behalf-of label.
 */
export interface Caller extends Principal {
  ingress: Ingress;
}

/** What authentication asks: the principal behind a token, if any (the credential book). */
export interface Authenticator {
  authenticate(token: string): Principal | undefined;
}

/** The caller behind a credential, or `unauthorized`. */
export function authenticate(credentials: Authenticator, token: string | undefined, ingress: Ingress): Caller {
  if (!token) throw new EffectdError('unauthorized', 'missing credentials: send the bearer token of an effectd credential (the embedded default writes them to <data-dir>/credentials.json)');
  const principal = credentials.authenticate(token);
  if (!principal) throw new EffectdError('unauthorized', 'unknown or revoked token');
  return callerOf(principal, ingress);
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

/**
 * The bearer token of a request, from its raw headers: Node keeps the first of two `Authorization`
 * headers and drops the other, so two of them would be first-wins, whichever a proxy or client
 * added. Two (or more) are refused instead (400, naming the header), on /v1 and /mcp alike.
 */
export function bearerToken(rawHeaders: readonly string[]): string | undefined {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'authorization') values.push(rawHeaders[i + 1] ?? '');
  if (values.length > 1) {
    throw new EffectdError('invalid_command', `the request has ${values.length} Authorization headers; send exactly one (Authorization: Bearer <token>): with several, which one counts would be a guess`, { fields: [{ path: 'Authorization', message: `${values.length} headers; exactly one is allowed` }] });
  }
  return /^Bearer\s+(\S+)$/i.exec(values[0] ?? '')?.[1];
}
