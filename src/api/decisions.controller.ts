import { Body, Controller, Get, Inject, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { z } from 'zod';
import { recordedOutcome } from '../core/agent-outcome.js';
import { invalidCommand } from '../core/errors.js';
import { foldWorkflow } from '../core/fold.js';
import { workflowStream } from '../core/streams.js';
import type { Principal } from '../runtime/credentials.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { AuthGuard, CurrentPrincipal } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';
import { tenantFor } from './tenant-access.js';

const decisionInput = z.object({
  step: z.union([z.string().min(1).max(128), z.number().int().nonnegative().transform(String)]),
  tool: z.string().min(1),
  args: z.record(z.string(), z.unknown()),
  decidedBy: z.string().max(256).optional(),
  tenant: z.string().optional(),
}).strict();

/** The model's side: journaled decisions, and the history of facts handed back to the model. */
@Controller('v1/workflows/:workflowId')
@UseGuards(AuthGuard)
export class DecisionsController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** Record the model's decision for a step before acting; 201 when recorded, 200 with the earlier decision when the step was decided already. */
  @Post('decisions')
  async decide(@Param('workflowId') workflowId: string, @Body() body: unknown, @CurrentPrincipal() principal: Principal, @Res({ passthrough: true }) res: Response) {
    const parsed = decisionInput.safeParse(body);
    if (!parsed.success) throw invalidCommand('invalid decision', parsed.error.issues);
    const { tenant, ...input } = parsed.data;
    const result = await this.runtime.shell.journal.decide(tenantFor(principal, tenant), workflowId, input);
    res.status(result.replayed ? 200 : 201);
    return { replayed: result.replayed, decision: { step: result.decision.step, tool: result.decision.tool, args: result.decision.args, decidedBy: result.decision.decidedBy, at: new Date(result.decision.at).toISOString() } };
  }

  @Get('decisions')
  async decisions(@Param('workflowId') workflowId: string, @CurrentPrincipal() principal: Principal, @Query('tenant') tenant?: string) {
    const state = await this.state(tenantFor(principal, tenant), workflowId);
    return { decisions: [...state.decisions.values()].map((d) => ({ step: d.step, tool: d.tool, args: d.args, decidedBy: d.decidedBy, at: new Date(d.at).toISOString() })) };
  }

  /**
   * What the model is told about earlier steps, built from the ledger (facts, not its context
   * window): each decided or executed step with its effects' three-state outcomes, in order.
   */
  @Get('history')
  async history(@Param('workflowId') workflowId: string, @CurrentPrincipal() principal: Principal, @Query('tenant') tenant?: string) {
    const state = await this.state(tenantFor(principal, tenant), workflowId);
    const now = this.runtime.now();
    const steps = new Map<string, { step: string; decision?: { tool: string; args: Record<string, unknown> }; outcomes: unknown[]; at: number }>();
    for (const d of state.decisions.values()) steps.set(d.step, { step: d.step, decision: { tool: d.tool, args: d.args }, outcomes: [], at: d.at });
    for (const e of state.effects.values()) {
      const entry = steps.get(e.declared.step) ?? { step: e.declared.step, outcomes: [], at: e.declared.at };
      const { status, receipt, message, effectId } = recordedOutcome(e, now, (id) => state.effects.get(id));
      entry.outcomes.push({ slot: e.declared.slot, effectId, status, ...(receipt ? { receipt } : {}), message });
      steps.set(e.declared.step, entry);
    }
    return { workflowId, steps: [...steps.values()].sort((a, b) => a.at - b.at).map(({ at: _at, ...rest }) => rest) };
  }

  private async state(tenant: string, workflowId: string) {
    return foldWorkflow((await this.runtime.ledger.readStream(workflowStream(tenant, workflowId))).map((r) => r.event));
  }
}
