import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import type { Caller } from '../gateway/caller.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { AuthGuard, CurrentCaller } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';

@Controller('v1/effects')
@UseGuards(AuthGuard)
export class EffectsController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** Submit an effect command (or `tool: "saga:<name>"`); the answer is the three-state outcome. A claim held elsewhere is 409. */
  @Post()
  async submit(@Body() body: unknown, @CurrentCaller() caller: Caller, @Res({ passthrough: true }) res: Response) {
    this.runtime.metrics.commandReceived('http');
    const submitted = await this.runtime.gateway.submit(caller, body);
    res.status(submitted.disposition === 'in-flight' ? 409 : 200);
    return submitted.outcome;
  }

  /** Effects by state (e.g. `?state=escalated`, or `?state=attention` for escalated + terminal), newest first. */
  @Get()
  list(@CurrentCaller() caller: Caller, @Query() query: Record<string, unknown>) {
    return this.runtime.gateway.effects(caller, query);
  }

  @Get(':effectId')
  get(@Param('effectId') effectId: string, @CurrentCaller() caller: Caller) {
    return this.runtime.gateway.effect(caller, effectId);
  }

  /** An operator settles an escalated, terminal or unknown effect with what they found at the provider. */
  @Post(':effectId/resolve')
  @HttpCode(200)
  resolve(@Param('effectId') effectId: string, @Body() body: unknown, @CurrentCaller() caller: Caller) {
    return this.runtime.gateway.resolve(caller, effectId, body);
  }

  /** An operator lets a held effect go (the repeat the agent should have declared): it is dispatched now. */
  @Post(':effectId/release')
  @HttpCode(200)
  release(@Param('effectId') effectId: string, @Body() body: unknown, @CurrentCaller() caller: Caller) {
    return this.runtime.gateway.release(caller, effectId, body);
  }

  /** An operator deals with one extra object of a detected duplicate: `{"action":"compensate"|"keep","reason":"…"}`. */
  @Post(':effectId/duplicates/:receipt')
  @HttpCode(200)
  handleDuplicate(@Param('effectId') effectId: string, @Param('receipt') receipt: string, @Body() body: unknown, @CurrentCaller() caller: Caller) {
    return this.runtime.gateway.handleDuplicate(caller, effectId, receipt, body);
  }
}
