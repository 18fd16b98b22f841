import { Controller, Get, UseGuards } from '@nestjs/common';
import type { Caller } from '../gateway/caller.js';
import { AuthGuard, CurrentCaller } from './auth.guard.js';

@Controller('v1/whoami')
@UseGuards(AuthGuard)
export class SessionController {
  /** Who the bearer token belongs to (name, role, tenant), so a client can say who is acting. */
  @Get()
  whoami(@CurrentCaller() caller: Caller) {
    const { name, role, tenant } = caller;
    return { name, role, tenant };
  }
}
