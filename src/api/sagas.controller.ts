import { Body, Controller, Get, Inject, Param, Post, Query, UseGuards } from '@nestjs/common';
import type { Caller } from '../gateway/caller.js';
import type { Gateway } from '../gateway/gateway.js';
import { AuthGuard, CurrentCaller } from './auth.guard.js';
import { GATEWAY } from './tokens.js';

@Controller('v1/sagas')
@UseGuards(AuthGuard)
export class SagasController {
  constructor(@Inject(GATEWAY) private readonly gateway: Gateway) {}

  /** The sagas this effectd runs, and those set aside for missing tools. */
  @Get()
  list() {
    return this.gateway.sagaDefinitions();
  }

  /** Every saga with its steps, compensations and input schema (declared before `:workflowId`, so it is matched first). */
  @Get('definitions')
  definitions() {
    return this.gateway.sagaCatalog();
  }

  /** Starts a saga (idempotent on its workflowId) and runs it as far as it can go now. */
  @Post()
  start(@Body() body: unknown, @CurrentCaller() caller: Caller) {
    return this.gateway.startSaga(caller, body);
  }

  /** The saga's steps, states and compensations, in order. */
  @Get(':workflowId')
  get(@Param('workflowId') workflowId: string, @CurrentCaller() caller: Caller, @Query('tenant') tenant?: string) {
    return this.gateway.saga(caller, workflowId, tenant);
  }
}
