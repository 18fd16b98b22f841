import { createParamDecorator, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { bearerToken, type Caller } from '../gateway/caller.js';
import type { Gateway } from '../gateway/gateway.js';
import { GATEWAY } from './tokens.js';

type AuthenticatedRequest = FastifyRequest & { caller?: Caller };

/** The authenticated caller, set by AuthGuard. */
export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => ctx.switchToHttp().getRequest<AuthenticatedRequest>().caller!);

/** Every /v1 call needs `Authorization: Bearer <token>`; who may do what is the gateway's to decide. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(@Inject(GATEWAY) private readonly gateway: Gateway) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    request.caller = this.gateway.authenticate(bearerToken(request.raw.rawHeaders), 'http');
    return true;
  }
}

