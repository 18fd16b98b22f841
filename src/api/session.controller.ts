import { Controller, Get, UseGuards } from '@nestjs/common';
import type { Principal } from '../runtime/credentials.js';
import { AuthGuard, CurrentPrincipal } from './auth.guard.js';

@Controller('v1/whoami')
@UseGuards(AuthGuard)
export class SessionController {
  /** Who the bearer token belongs to (name, role, tenant), so a client can say who is acting. */
  @Get()
  whoami(@CurrentPrincipal() principal: Principal): Principal {
    return principal;
  }
}
