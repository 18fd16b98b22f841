/**
 * Every error effectd raises says what the caller should do next, by its code.
 * Guards compare codes, not classes, so two loaded copies of the package still agree.
 */
export type ErrorCode =
  | 'illegal_transition'
  | 'concurrency_conflict'
  | 'intent_conflict'
  | 'invalid_command'
  | 'unknown_tool'
  | 'invalid_config'
  | 'not_found'
  | 'unauthorized'
  | 'forbidden'
  /** Too many writers on one workflow stream at once: nothing was recorded; send it again after `retryAfterMs`. */
  | 'contention'
  /** The ledger (or another part effectd needs) is unreachable: nothing was decided; send it again after `retryAfterMs`. */
  | 'unavailable'
  /** A defect in effectd: sending the same thing again will fail again. */
  | 'internal';

/**
 * What the caller should do, the one thing every transport maps to its wire (HTTP status, Kafka
 * verdict, MCP result): fix the input, authenticate, stop (not yours), look elsewhere, re-read and
 * decide again, retry the same thing later, or give up.
 */
export type ErrorAction = 'invalid_input' | 'unauthorized' | 'forbidden' | 'not_found' | 'conflict' | 'retry_after' | 'terminal';

const ACTION: Record<ErrorCode, ErrorAction> = {
  invalid_command: 'invalid_input',
  unknown_tool: 'invalid_input',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  not_found: 'not_found',
  intent_conflict: 'conflict',
  illegal_transition: 'conflict',
  concurrency_conflict: 'conflict',
  contention: 'retry_after',
  unavailable: 'retry_after',
  invalid_config: 'terminal',
  internal: 'terminal',
};

export function errorAction(code: ErrorCode): ErrorAction {
  return ACTION[code];
}

/** Whether a value (a code read off the wire, say) is one of effectd's error codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ACTION, value);
}

export class EffectdError extends Error {
  /** `options.cause`: the underlying error (a driver's, a parser's), kept as the standard `Error.cause`. */
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options: { cause?: unknown } = {},
  ) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'EffectdError';
  }
}

export function isEffectdError(error: unknown, code?: ErrorCode): error is EffectdError {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as { name?: unknown; code?: unknown };
  return candidate.name === 'EffectdError' && (code === undefined || candidate.code === code);
}

export class IllegalTransitionError extends EffectdError {
  constructor(effectId: string, from: string, eventType: string, why: string) {
    super('illegal_transition', `effect ${effectId}: ${eventType} is not allowed in state ${from} (${why})`, { effectId, from, eventType });
  }
}

/** A 400-class error listing each offending field by its path, for validation failures of any input. */
export function invalidCommand(summary: string, issues: readonly { path: readonly PropertyKey[]; message: string }[], prefix: string[] = []): EffectdError {
  const fields = issues.map((i) => ({ path: [...prefix, ...i.path.map(String)].join('.') || '(body)', message: i.message }));
  return new EffectdError('invalid_command', `${summary}: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`, { fields });
}

/**
 * Any failure as a coded error: effectd's own pass through; anything else (a driver's ECONNREFUSED,
 * a disk error) means a part effectd needs is down, so `unavailable`. Plain programming errors
 * (TypeError, RangeError) are `internal`: retrying them would fail the same way.
 */
export function asEffectdError(error: unknown): EffectdError {
  if (isEffectdError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isDefect(error)) return new EffectdError('internal', `effectd hit a defect: ${message}`, {});
  return new EffectdError('unavailable', `a part effectd depends on failed: ${message}; ${NOTHING_RECORDED}`, { retryAfterMs: 1_000 });
}

/**
 * What a failure before any write says (asEffectdError's `unavailable`): true only while nothing
 * was written for the command. Once an effect's declaration or attempt is in the ledger, the shell
 * says that instead (src/shell/recorded-failure.ts), with the effect's reference.
 */
export const NOTHING_RECORDED = 'nothing was recorded; send the same command again';

/** Plain programming errors: retrying them would fail the same way. */
function isDefect(error: unknown): boolean {
  return error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError || error instanceof ReferenceError || error instanceof URIError;
}

/** The failure itself, without effectd's advice about it (for a message that gives its own). */
export function failureText(error: unknown): string {
  if (isEffectdError(error)) return error.message.endsWith(`; ${NOTHING_RECORDED}`) ? error.message.slice(0, -NOTHING_RECORDED.length - 2) : error.message;
  const message = error instanceof Error ? error.message : String(error);
  return isDefect(error) ? `effectd hit a defect: ${message}` : `a part effectd depends on failed: ${message}`;
}
