/**
 * Fields pino blanks out whatever a call site passes: the second guard behind the rule that no log
 * record carries a bearer token, the server secret, a provider (idempotency) key or an auth header.
 * The first guard is that no call site logs them (src/logging/event-log.ts picks its fields).
 */
const SENSITIVE = ['token', 'secret', 'providerKey', 'idempotencyKey', 'authorization', 'Authorization', 'cookie', 'password', 'idempotency-key', 'Idempotency-Key'];

/** fast-redact paths at the top level and one or two levels down (`headers.authorization`, `req.headers.authorization`). */
export const REDACTED_PATHS: string[] = SENSITIVE.flatMap((field) => {
  const key = /^[A-Za-z_$][\w$]*$/.test(field) ? { top: field, nested: `.${field}` } : { top: `["${field}"]`, nested: `["${field}"]` };
  return [key.top, `*${key.nested}`, `*.*${key.nested}`];
});

export const REDACTION_CENSOR = '[redacted]';
