import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import type { Caller } from '../gateway/caller.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { AuthGuard, CurrentCaller } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';

@Controller('v1/workflows')
@UseGuards(AuthGuard)
export class WorkflowsController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** Recent workflows the caller may see, most recently active first (`?tenant=`, `?limit=`, `?attention=1`). */
  @Get()
  list(@CurrentCaller() caller: Caller, @Query() query: Record<string, unknown>) {
    return this.runtime.gateway.workflows(caller, query);
  }

  /** The workflow's timeline: every intent, attempt, check and outcome in order, and each effect's state. */
  @Get(':workflowId')
  get(@Param('workflowId') workflowId: string, @CurrentCaller() caller: Caller, @Query('tenant') tenant?: string) {
    return this.runtime.gateway.workflow(caller, workflowId, tenant);
  }
}
