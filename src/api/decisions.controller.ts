import { Body, Controller, Get, Inject, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Caller } from '../gateway/caller.js';
import type { Gateway } from '../gateway/gateway.js';
import { AuthGuard, CurrentCaller } from './auth.guard.js';
import { GATEWAY } from './tokens.js';

/** The model's side: journaled decisions, and the history of facts handed back to the model. */
@Controller('v1/workflows/:workflowId')
@UseGuards(AuthGuard)
export class DecisionsController {
  constructor(@Inject(GATEWAY) private readonly gateway: Gateway) {}

  /** Record the model's decision for a step before acting; 201 when recorded, 200 with the earlier decision when the step was decided already. */
  @Post('decisions')
  async decide(@Param('workflowId') workflowId: string, @Body() body: unknown, @CurrentCaller() caller: Caller, @Res({ passthrough: true }) res: FastifyReply, @Query('tenant') tenant?: string) {
    // ?tenant= is honoured as on the GETs (it was ignored): the same as the body's `tenant`, or refused.
    const result = await this.gateway.decide(caller, workflowId, body, tenant);
    res.status(result.replayed ? 200 : 201);
    return result;
  }

  @Get('decisions')
  decisions(@Param('workflowId') workflowId: string, @CurrentCaller() caller: Caller, @Query('tenant') tenant?: string) {
    return this.gateway.decisions(caller, workflowId, tenant);
  }

  /** What the model is told about earlier steps, built from the ledger (facts, not its context window). */
  @Get('history')
  history(@Param('workflowId') workflowId: string, @CurrentCaller() caller: Caller, @Query('tenant') tenant?: string) {
    return this.gateway.history(caller, workflowId, tenant);
  }
}
