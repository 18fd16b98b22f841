import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { appliedWait, preferredWaitMs } from '../core/prefer-wait.js';
import type { Caller } from '../gateway/caller.js';
import type { Gateway } from '../gateway/gateway.js';
import { AuthGuard, CurrentCaller } from './auth.guard.js';
import type { PromMetrics } from '../metrics/prom-metrics.js';
import { GATEWAY, METRICS } from './tokens.js';

@Controller('v1/effects')
@UseGuards(AuthGuard)
export class EffectsController {
  constructor(
    @Inject(GATEWAY) private readonly gateway: Gateway,
    @Inject(METRICS) private readonly metrics: PromMetrics,
  ) {}

  /** Submit an effect command (or `tool: "saga:<name>"`); the answer is the three-state outcome. A claim held elsewhere is 409. */
  @Post()
  async submit(@Body() body: unknown, @CurrentCaller() caller: Caller, @Res({ passthrough: true }) res: FastifyReply, @Headers('prefer') prefer?: string) {
    this.metrics.commandReceived('http');
    // `Prefer: wait=N` (RFC 7240): how long the answer may wait for a lost reply to be settled.
    const waitMs = preferredWaitMs(prefer);
    const submitted = await this.gateway.submit(caller, body, waitMs !== undefined ? { waitMs } : {});
    if (submitted.waitApplied !== undefined) res.header('Preference-Applied', appliedWait(submitted.waitApplied));
    res.status(submitted.disposition === 'in-flight' ? 409 : 200);
    return submitted.outcome;
  }

  /** Effects by state (e.g. `?state=escalated`, or `?state=attention` for escalated + terminal), newest first, a page at a time (`?limit=`, `?cursor=` = the previous page's `nextCursor`). */
  @Get()
  list(@CurrentCaller() caller: Caller, @Query() query: Record<string, unknown>) {
    return this.gateway.effects(caller, query);
  }

  @Get(':effectId')
  get(@Param('effectId') effectId: string, @CurrentCaller() caller: Caller) {
    return this.gateway.effect(caller, effectId);
  }

  /** An operator settles an escalated, terminal or unknown effect with what they found at the provider. */
  @Post(':effectId/resolve')
  @HttpCode(200)
  resolve(@Param('effectId') effectId: string, @Body() body: unknown, @CurrentCaller() caller: Caller) {
    return this.gateway.resolve(caller, effectId, body);
  }

  /** An operator lets a held effect go (the repeat the agent should have declared): it is dispatched now. */
  @Post(':effectId/release')
  @HttpCode(200)
  release(@Param('effectId') effectId: string, @Body() body: unknown, @CurrentCaller() caller: Caller) {
    return this.gateway.release(caller, effectId, body);
  }

  /** An operator deals with one extra object of a detected duplicate: `{"action":"compensate"|"keep","reason":"…"}`. */
  @Post(':effectId/duplicates/:receipt')
  @HttpCode(200)
  handleDuplicate(@Param('effectId') effectId: string, @Param('receipt') receipt: string, @Body() body: unknown, @CurrentCaller() caller: Caller) {
    return this.gateway.handleDuplicate(caller, effectId, receipt, body);
  }
}
