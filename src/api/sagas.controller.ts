import { Body, Controller, Get, Inject, Param, Post, Query, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { invalidCommand } from '../core/errors.js';
import type { Principal } from '../runtime/credentials.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { AuthGuard, CurrentPrincipal } from './auth.guard.js';
import { RUNTIME } from './runtime.token.js';
import { tenantFor } from './tenant-access.js';

const startSaga = z.object({
  saga: z.string().min(1),
  workflowId: z.string().min(1).max(256),
  input: z.unknown(),
  tenant: z.string().optional(),
}).strict();

@Controller('v1/sagas')
@UseGuards(AuthGuard)
export class SagasController {
  constructor(@Inject(RUNTIME) private readonly runtime: EffectdRuntime) {}

  /** The sagas this effectd runs, and those set aside for missing tools. */
  @Get()
  list() {
    return {
      sagas: this.runtime.sagas.names().map((name) => {
        const saga = this.runtime.sagas.get(name)!;
        return { name, version: saga.version, description: saga.description, steps: saga.steps.map((s) => ({ name: s.name, tool: s.tool, reversibility: s.reversibility, compensation: s.compensation?.name })) };
      }),
      unavailable: this.runtime.sagas.notAvailable().map(([name, why]) => ({ name, why })),
    };
  }

  /** Starts a saga (idempotent on its workflowId) and runs it as far as it can go now. */
  @Post()
  async start(@Body() body: unknown, @CurrentPrincipal() principal: Principal) {
    const parsed = startSaga.safeParse(body);
    if (!parsed.success) throw invalidCommand('invalid saga start', parsed.error.issues);
    const { saga, workflowId, input, tenant } = parsed.data;
    return this.runtime.sagaRunner.start(tenantFor(principal, tenant), workflowId, saga, input, principal.name);
  }

  /** The saga's steps, states and compensations, in order. */
  @Get(':workflowId')
  async get(@Param('workflowId') workflowId: string, @CurrentPrincipal() principal: Principal, @Query('tenant') tenant?: string) {
    return this.runtime.sagaRunner.view(tenantFor(principal, tenant), workflowId);
  }
}
