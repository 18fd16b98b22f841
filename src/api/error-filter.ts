import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { asEffectdError, errorAction, type ErrorAction } from '../core/errors.js';
import type { Logger } from '../logging/logger.js';

/** The one place an error's meaning becomes an HTTP status. */
const STATUS: Record<ErrorAction, number> = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  retry_after: 503,
  terminal: 500,
};

/** A changed intent is 422 (the request is well-formed, but the step was declared with other arguments). */
const BY_CODE: Partial<Record<string, number>> = { intent_conflict: 422 };

/** Maps effectd's coded errors to HTTP answers that say what went wrong and what to do. */
@Catch()
export class EffectdErrorFilter implements ExceptionFilter {
  constructor(private readonly log: Pick<Logger, 'error'>) {}

  catch(thrown: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (thrown instanceof HttpException) {
      res.status(thrown.getStatus()).json({ error: 'http_error', message: thrown.message });
      return;
    }
    const error = asEffectdError(thrown);
    const action = errorAction(error.code);
    if (action === 'terminal' || action === 'retry_after') this.log.error({ event: 'HttpError', code: error.code, ...(action === 'terminal' && thrown !== error ? { err: thrown } : {}) }, `http: ${error.code}: ${error.message}`);
    const retryAfterMs = typeof error.details.retryAfterMs === 'number' ? error.details.retryAfterMs : undefined;
    if (retryAfterMs !== undefined) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    res.status(BY_CODE[error.code] ?? STATUS[action]).json({ error: error.code, action, message: error.message, ...error.details });
  }
}
