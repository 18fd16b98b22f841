import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
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

/**
 * A changed intent is 422 (the request is well-formed, but the step was declared with other
 * arguments). Its body carries the error's details, `recorded` among them: where the effect the
 * step recorded stands (docs/http-api.md, "Refusals"). A refusal is a 4xx, never a 200 not_done.
 */
const BY_CODE: Partial<Record<string, number>> = { intent_conflict: 422 };

/**
 * A request body refused before any handler ran (src/api/http-server.ts: not JSON, too large, an
 * unknown encoding): answered with exactly this status and body. No `statusCode` field, so the
 * Fastify adapter passes it to the filter as it is.
 */
export class HttpBodyRefused extends Error {
  constructor(readonly status: number, readonly body: { error: string; message: string }) {
    super(body.message);
  }
}

/** Fastify's own 4xx errors about reading a body (a length that does not match, …). */
function fastifyBodyError(thrown: HttpException): string | undefined {
  const cause = (thrown as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' && cause.code.startsWith('FST_ERR_CTP_') ? thrown.message : undefined;
}

/** Maps effectd's coded errors to HTTP answers that say what went wrong and what to do. */
@Catch()
export class EffectdErrorFilter implements ExceptionFilter {
  constructor(private readonly log: Pick<Logger, 'error'>) {}

  catch(thrown: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (thrown instanceof HttpBodyRefused) {
      reply.status(thrown.status).send(thrown.body);
      return;
    }
    if (thrown instanceof HttpException) {
      const bodyError = fastifyBodyError(thrown);
      if (bodyError !== undefined) reply.status(thrown.getStatus()).send({ error: 'bad_request', message: `the request body could not be read: ${bodyError}` });
      else reply.status(thrown.getStatus()).send({ error: 'http_error', message: thrown.message });
      return;
    }
    const error = asEffectdError(thrown);
    const action = errorAction(error.code);
    if (action === 'terminal' || action === 'retry_after') this.log.error({ event: 'HttpError', code: error.code, ...(action === 'terminal' && thrown !== error ? { err: thrown } : {}) }, `http: ${error.code}: ${error.message}`);
    const retryAfterMs = typeof error.details.retryAfterMs === 'number' ? error.details.retryAfterMs : undefined;
    if (retryAfterMs !== undefined) reply.header('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    reply.status(BY_CODE[error.code] ?? STATUS[action]).send({ error: error.code, action, message: error.message, ...error.details });
  }
}
