import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { recordedOutcome } from '../core/agent-outcome.js';
import { unknownSinceAt } from '../core/effect-state.js';
import { EffectdError } from '../core/errors.js';
import { isEffectEvent } from '../core/events.js';
import { foldWorkflow } from '../core/fold.js';
import { workflowStream } from '../core/streams.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { describeEvent } from '../runtime/timeline.js';
import { canSeeTenant, type Principal } from '../runtime/credentials.js';
import { summarizeWorkflows } from '../runtime/workflow-summaries.js';
import { AuthGuard, CurrentPrincipal } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';

@Controller('v1/workflows')
@UseGuards(AuthGuard)
export class WorkflowsController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** Recent workflows the caller may see, most recently active first (`?tenant=`, `?limit=`, `?attention=1`). */
  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query('tenant') tenant?: string, @Query('limit') limit = '50', @Query('attention') attention?: string) {
    await this.runtime.effectStates.refresh();
    const visible = this.runtime.effectStates.all().filter((e) => canSeeTenant(principal, e.declared.tenant) && (!tenant || e.declared.tenant === tenant));
    const all = summarizeWorkflows(visible, this.runtime.now());
    const wanted = attention === '1' || attention === 'true' ? all.filter((w) => w.needsOperator) : all;
    const effects: Record<string, number> = {};
    for (const w of all) for (const [state, n] of Object.entries(w.states)) effects[state] = (effects[state] ?? 0) + n;
    return { total: wanted.length, effects, workflows: wanted.slice(0, Math.max(1, Math.min(500, Number(limit) || 50))) };
  }

  /** The workflow's timeline: every intent, attempt, check and outcome in order, and each effect's state. */
  @Get(':workflowId')
  async get(@Param('workflowId') workflowId: string, @CurrentPrincipal() principal: Principal, @Query('tenant') tenantQuery?: string) {
    const tenant = tenantQuery ?? (principal.tenant === '*' ? 'default' : principal.tenant);
    if (!canSeeTenant(principal, tenant)) throw new EffectdError('forbidden', `${principal.name} may only read workflows of tenant ${principal.tenant}`);
    const recorded = await this.runtime.ledger.readStream(workflowStream(tenant, workflowId));
    if (recorded.length === 0) throw new EffectdError('not_found', `no workflow ${workflowId} for tenant ${tenant}`);
    const state = foldWorkflow(recorded.map((r) => r.event));
    const now = this.runtime.now();
    return {
      tenant,
      workflowId,
      revision: state.revision,
      effects: [...state.effects.values()].map((e) => ({
        ...recordedOutcome(e, now, (id) => state.effects.get(id)), step: e.declared.step, slot: e.declared.slot, attempts: e.attempts.length,
        declaredAt: new Date(e.declared.at).toISOString(),
        ...(unknownSinceAt(e, now) !== undefined ? { unknownSince: new Date(unknownSinceAt(e, now)!).toISOString() } : {}),
        ...(e.settledAt !== undefined ? { settledAt: new Date(e.settledAt).toISOString() } : {}),
        ...(e.resolvedBy ? { resolvedBy: e.resolvedBy } : {}),
      })),
      ...(state.saga ? { saga: await this.runtime.sagaRunner.view(tenant, workflowId) } : {}),
      timeline: recorded.map((r) => ({ revision: r.revision, position: r.position, at: new Date(r.event.at).toISOString(), type: r.event.type, effectId: isEffectEvent(r.event) ? r.event.effectId : undefined, summary: describeEvent(r.event), event: r.event })),
    };
  }
}
