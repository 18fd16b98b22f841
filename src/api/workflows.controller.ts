import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { agentOutcome } from '../core/agent-outcome.js';
import { EffectdError } from '../core/errors.js';
import { foldWorkflow } from '../core/fold.js';
import { workflowStream } from '../core/streams.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { describeEvent } from '../runtime/timeline.js';
import { canSeeTenant, type Principal } from '../runtime/credentials.js';
import { AuthGuard, CurrentPrincipal } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';

@Controller('v1/workflows')
@UseGuards(AuthGuard)
export class WorkflowsController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

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
      effects: [...state.effects.values()].map((e) => ({ ...agentOutcome(e, { now, replayed: true }), step: e.declared.step, slot: e.declared.slot, attempts: e.attempts.length })),
      timeline: recorded.map((r) => ({ revision: r.revision, position: r.position, at: new Date(r.event.at).toISOString(), type: r.event.type, effectId: r.event.effectId, summary: describeEvent(r.event), event: r.event })),
    };
  }
}
