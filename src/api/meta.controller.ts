import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import type { Gateway } from '../gateway/gateway.js';
import { AuthGuard } from './auth.guard.js';
import { GATEWAY } from './tokens.js';

@Controller('v1/meta')
@UseGuards(AuthGuard)
export class MetaController {
  constructor(@Inject(GATEWAY) private readonly gateway: Gateway) {}

  /** The effect lifecycle table: every status, what it means and what it allows (the console takes its sets of states from it). */
  @Get()
  meta() {
    return this.gateway.meta();
  }
}
