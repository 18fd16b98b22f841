import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { AuthGuard } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';

@Controller('v1/meta')
@UseGuards(AuthGuard)
export class MetaController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** The effect lifecycle table: every status, what it means and what it allows (the console takes its sets of states from it). */
  @Get()
  meta() {
    return this.runtime.gateway.meta();
  }
}
