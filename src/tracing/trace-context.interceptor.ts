import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { withTraceFrom } from './trace-context.js';
import { tracingOn } from './tracer.js';

/**
 * Every HTTP request's handler runs in the caller's trace (its `traceparent` header), so the
 * command span the gateway opens is a child of the agent's span. Reads only `request.headers`,
 * which Express and Fastify both give; Nest runs the handler in the async scope this sets.
 */
@Injectable()
export class TraceContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!tracingOn() || context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<{ headers?: unknown }>();
    return withTraceFrom(request.headers, () => next.handle());
  }
}
