/**
 * The simulators' coded error (they import nothing of effectd, so this is their own copy of the
 * shape effectd's code outside the service uses): the code says what the caller should do: fix a
 * setting (`invalid_config`), fix the input (`invalid_command`), look elsewhere (`not_found`), retry
 * later (`unavailable`), or give up (`internal`, a defect).
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
