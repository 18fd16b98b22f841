import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { isEffectdError, type ErrorCode } from '../core/errors.js';

const STATUS: Record<ErrorCode, number> = {
  invalid_command: 400,
  unknown_tool: 400,
  intent_conflict: 422,
  not_found: 404,
  unauthorized: 401,
  forbidden: 403,
  concurrency_conflict: 409,
  illegal_transition: 409,
  invalid_config: 500,
};

/** Maps effectd's coded errors to HTTP answers that say what went wrong and where. */
@Catch()
export class EffectdErrorFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (isEffectdError(error)) {
      res.status(STATUS[error.code]).json({ error: error.code, message: error.message, ...error.details });
      return;
    }
    if (error instanceof HttpException) {
      res.status(error.getStatus()).json({ error: 'http_error', message: error.message });
      return;
    }
    console.error('effectd: unexpected error', error);
    res.status(500).json({ error: 'internal', message: 'effectd hit an unexpected error; see its log' });
  }
}
