import { createParamDecorator, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../gateway/caller.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { RUNTIME } from './runtime.token.js';

type AuthenticatedRequest = FastifyRequest & { caller?: Caller };

/** The authenticated caller, set by AuthGuard. */
export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => ctx.switchToHttp().getRequest<AuthenticatedRequest>().caller!);

/** Every /v1 call needs `Authorization: Bearer <token>`; who may do what is the gateway's to decide. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    request.caller = this.runtime.gateway.authenticate(match?.[1], 'http');
    return true;
  }
}
