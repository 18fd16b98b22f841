import { Body, Controller, Get, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { agentOutcome } from '../core/agent-outcome.js';
import { EffectdError } from '../core/errors.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { RUNTIME } from './runtime.token.js';

@Controller('v1/effects')
export class EffectsController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** Submit an effect command; the answer is the three-state outcome. A claim held elsewhere is 409. */
  @Post()
  async submit(@Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    this.runtime.metrics.commandReceived('http');
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new EffectdError('invalid_command', 'the request body must be a JSON object (an effect command)');
    }
    const answer = await this.runtime.shell.execute(body);
    res.status(answer.disposition === 'in-flight' ? 409 : 200);
    return answer.outcome;
  }

  @Get(':effectId')
  @HttpCode(200)
  async get(@Param('effectId') effectId: string) {
    await this.runtime.effectStates.refresh();
    const effect = this.runtime.effectStates.get(effectId);
    if (!effect) throw new EffectdError('not_found', `no effect ${effectId}`);
    return { ...agentOutcome(effect, { now: this.runtime.now(), replayed: true }), workflowId: effect.declared.workflowId, tenant: effect.declared.tenant, step: effect.declared.step, slot: effect.declared.slot, attempts: effect.attempts.length };
  }
}
