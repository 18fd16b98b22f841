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
  | 'forbidden';

export class EffectdError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
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
