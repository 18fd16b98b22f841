import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import type { Caller } from '../gateway/caller.js';
import type { Gateway } from '../gateway/gateway.js';
import { AuthGuard, CurrentCaller } from './auth.guard.js';
import { GATEWAY } from './tokens.js';

@Controller('v1/workflows')
@UseGuards(AuthGuard)
export class WorkflowsController {
  constructor(@Inject(GATEWAY) private readonly gateway: Gateway) {}

  /** Recent workflows the caller may see, most recently active first (`?tenant=`, `?limit=`, `?attention=1`). */
  @Get()
  list(@CurrentCaller() caller: Caller, @Query() query: Record<string, unknown>) {
    return this.gateway.workflows(caller, query);
  }

  /** The workflow's timeline: every intent, attempt, check and outcome in order, and each effect's state. */
  @Get(':workflowId')
  get(@Param('workflowId') workflowId: string, @CurrentCaller() caller: Caller, @Query('tenant') tenant?: string) {
    return this.gateway.workflow(caller, workflowId, tenant);
  }
}
