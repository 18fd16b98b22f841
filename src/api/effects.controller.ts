import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { z } from 'zod';
import { recordedOutcome } from '../core/agent-outcome.js';
import { effectStatus, type EffectState } from '../core/effect-state.js';
import { EffectdError, invalidCommand } from '../core/errors.js';
import { isEffectEvent } from '../core/events.js';
import { workflowStream } from '../core/streams.js';
import { canSeeTenant, type Principal } from '../runtime/credentials.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { describeEvent } from '../runtime/timeline.js';
import { AuthGuard, CurrentPrincipal, OperatorOnly } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';

const resolution = z.object({
  outcome: z.enum(['committed', 'not_committed']),
  receipt: z.string().min(1).optional(),
  reason: z.string().min(1, 'say what you checked and where (the reason is kept in the ledger)'),
}).strict().refine((r) => r.outcome !== 'committed' || r.receipt, { message: 'a committed resolution needs the provider receipt you found (e.g. ch_…)', path: ['receipt'] });

@Controller('v1/effects')
@UseGuards(AuthGuard)
export class EffectsController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** Submit an effect command; the answer is the three-state outcome. A claim held elsewhere is 409. */
  @Post()
  async submit(@Body() body: unknown, @CurrentPrincipal() principal: Principal, @Res({ passthrough: true }) res: Response) {
    this.runtime.metrics.commandReceived('http');
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new EffectdError('invalid_command', 'the request body must be a JSON object (an effect command)');
    }
    const command = body as Record<string, unknown>;
    const tenant = typeof command.tenant === 'string' ? command.tenant : principal.tenant === '*' ? 'default' : principal.tenant;
    if (!canSeeTenant(principal, tenant)) throw new EffectdError('forbidden', `${principal.name} may only submit effects for tenant ${principal.tenant}`);
    const answer = await this.runtime.shell.execute({ ...command, tenant, principal: typeof command.principal === 'string' ? command.principal : principal.name });
    res.status(answer.disposition === 'in-flight' ? 409 : 200);
    return answer.outcome;
  }

  /** Effects by state (e.g. `?state=escalated`, or `?state=attention` for escalated + terminal), newest first. */
  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query('state') state?: string, @Query('tenant') tenant?: string, @Query('limit') limit = '100') {
    await this.runtime.effectStates.refresh();
    const now = this.runtime.now();
    const wanted = state === 'attention' ? new Set(['escalated', 'terminal_failure']) : state ? new Set(state.split(',')) : undefined;
    const effects = this.runtime.effectStates.all()
      .filter((e) => canSeeTenant(principal, e.declared.tenant) && (!tenant || e.declared.tenant === tenant))
      .filter((e) => !wanted || wanted.has(effectStatus(e, now)))
      .sort((a, b) => b.lastEventAt - a.lastEventAt)
      .slice(0, Math.max(1, Math.min(1_000, Number(limit) || 100)));
    return { effects: effects.map((e) => this.view(e)) };
  }

  @Get(':effectId')
  @HttpCode(200)
  async get(@Param('effectId') effectId: string, @CurrentPrincipal() principal: Principal) {
    return this.detailed(await this.visible(effectId, principal));
  }

  /** An operator settles an escalated, terminal or unknown effect with what they found at the provider. */
  @Post(':effectId/resolve')
  @OperatorOnly()
  @HttpCode(200)
  async resolve(@Param('effectId') effectId: string, @Body() body: unknown, @CurrentPrincipal() principal: Principal) {
    const parsed = resolution.safeParse(body);
    if (!parsed.success) throw invalidCommand('invalid resolution', parsed.error.issues);
    const effect = await this.visible(effectId, principal);
    const { outcome, receipt, reason } = parsed.data;
    const resolved = await this.runtime.shell.operators.resolve(effect, { resolvedBy: principal.name, outcome: outcome === 'committed' ? 'committed' : 'failed_before_effect', reason, ...(receipt ? { receipt } : {}) });
    return this.detailed(resolved);
  }

  /** The effect with its whole history: every intent, attempt, check, escalation and resolution, in order. */
  private async detailed(effect: EffectState) {
    const stream = workflowStream(effect.declared.tenant, effect.declared.workflowId);
    const events = (await this.runtime.ledger.readStream(stream)).map((r) => r.event).filter((e) => isEffectEvent(e) && e.effectId === effect.effectId);
    return { ...this.view(effect), args: effect.declared.args, evidence: events.map((e) => ({ at: new Date(e.at).toISOString(), type: e.type, summary: describeEvent(e) })) };
  }

  /** An operator lets a held effect go (the repeat the agent should have declared): it is dispatched now. */
  @Post(':effectId/release')
  @OperatorOnly()
  @HttpCode(200)
  async release(@Param('effectId') effectId: string, @Body() body: unknown, @CurrentPrincipal() principal: Principal) {
    const reason = (body as { reason?: unknown } | undefined)?.reason;
    if (typeof reason !== 'string' || reason.trim() === '') throw new EffectdError('invalid_command', 'a release needs a "reason": why this is a separate effect and not a duplicate', { fields: [{ path: 'reason', message: 'required' }] });
    const answer = await this.runtime.shell.operators.release(await this.visible(effectId, principal), principal.name, reason);
    return answer.outcome;
  }

  private async visible(effectId: string, principal: Principal): Promise<EffectState> {
    await this.runtime.effectStates.refresh();
    const effect = this.runtime.effectStates.get(effectId);
    if (!effect) throw new EffectdError('not_found', `no effect ${effectId}`);
    if (!canSeeTenant(principal, effect.declared.tenant)) throw new EffectdError('forbidden', `effect ${effectId} belongs to another tenant`);
    return effect;
  }

  private view(effect: EffectState) {
    const { tenant, workflowId, step, slot, principal } = effect.declared;
    const now = this.runtime.now();
    return {
      ...recordedOutcome(effect, now, (id) => this.runtime.effectStates.get(id)),
      tenant, workflowId, step, slot, declaredBy: principal, attempts: effect.attempts.length,
      ...(effect.unknownSince !== undefined ? { unknownSince: new Date(effect.unknownSince).toISOString() } : {}),
      ...(effect.resolvedBy ? { resolvedBy: effect.resolvedBy } : {}),
    };
  }
}
