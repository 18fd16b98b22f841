import { createParamDecorator, Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { EffectdError } from '../core/errors.js';
import { CredentialBook, type Principal } from '../runtime/credentials.js';

const OPERATOR_ONLY = 'effectd:operator-only';

/** Marks a handler that only operator credentials may call. */
export const OperatorOnly = () => SetMetadata(OPERATOR_ONLY, true);

/** The authenticated caller, set by AuthGuard. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => ctx.switchToHttp().getRequest<Request & { principal: Principal }>().principal);

/** Every /v1 call needs `Authorization: Bearer <token>`: 401 without a valid one, 403 for the wrong role. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(@Inject(CredentialBook) private readonly credentials: CredentialBook, @Inject(Reflector) private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request & { principal?: Principal }>();
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new EffectdError('unauthorized', 'missing credentials: send Authorization: Bearer <token> (the embedded default writes tokens to <data-dir>/credentials.json)');
    const principal = this.credentials.authenticate(match[1]!);
    if (!principal) throw new EffectdError('unauthorized', 'unknown or revoked token');
    const operatorOnly = this.reflector.getAllAndOverride<boolean>(OPERATOR_ONLY, [context.getHandler(), context.getClass()]);
    if (operatorOnly && principal.role !== 'operator') throw new EffectdError('forbidden', `${principal.name} is an agent credential; only operator credentials may do this`);
    request.principal = principal;
    return true;
  }
}
