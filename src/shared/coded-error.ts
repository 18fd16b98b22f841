/**
 * The coded error of the code that may not import the service's core: src/shared itself and the
 * private benchmark workspace (packages/bench; the simulators, packages/simulators, keep a copy of
 * their own, since they import nothing of effectd). Like core's
 * EffectdError (src/core/errors.ts, the only error the service raises), its code says what the caller
 * should do: fix a setting (`invalid_config`), fix the input (`invalid_command`), look elsewhere
 * (`not_found`), retry later (`unavailable`), or give up (`internal`, a defect). Inside the service
 * asEffectdError treats it as any foreign error.
 */
export type CodedErrorCode = 'invalid_config' | 'invalid_command' | 'not_found' | 'unavailable' | 'internal';

export class CodedError extends Error {
  constructor(
    readonly code: CodedErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'CodedError';
  }
}
