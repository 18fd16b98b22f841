import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import type { Gateway } from '../gateway/gateway.js';
import { AuthGuard } from './auth.guard.js';
import { GATEWAY } from './tokens.js';

@Controller('v1/tools')
@UseGuards(AuthGuard)
export class ToolsController {
  constructor(@Inject(GATEWAY) private readonly gateway: Gateway) {}

  /** Every configured tool: its contract and the JSON Schema of its arguments (no provider secrets). */
  @Get()
  list() {
    return this.gateway.toolCatalog();
  }
}
