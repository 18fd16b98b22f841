import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { AuthGuard } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';

@Controller('v1/tools')
@UseGuards(AuthGuard)
export class ToolsController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** Every configured tool: its contract and the JSON Schema of its arguments (no provider secrets). */
  @Get()
  list() {
    return this.runtime.gateway.toolCatalog();
  }
}
