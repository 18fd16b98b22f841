import type { AgentOutcome } from '../../core/agent-outcome.js';
import { EffectdError } from '../../core/errors.js';
import { sagaOutcome } from '../../shell/saga-outcome.js';
import type { SagaRegistry } from '../../shell/saga-registry.js';
import type { SagaView } from '../../shell/saga-runner.js';
import { tenantOf, type Caller } from '../caller.js';
import { workflowIdOf } from '../inputs.js';
import { workflowState, type Reads } from '../reads.js';

/** A saga's steps, states and compensations, in order. */
export function sagaView(reads: Pick<Reads, 'sagaRunner'>, caller: Caller, workflowId: string, tenant?: string): Promise<SagaView> {
  return reads.sagaRunner.view(tenantOf(caller, tenant), workflowIdOf(workflowId));
}

/**
 * A saga as the three-state answer its start gave (completed → done, compensated → not_done, else
 * unknown), with when it started and when anything in its workflow last happened (an MCP task's times).
 */
export async function sagaAnswer(reads: Pick<Reads, 'sagaRunner' | 'shell'>, caller: Caller, workflowId: string, tenant?: string): Promise<{ outcome: AgentOutcome; startedAt: number; lastUpdatedAt: number }> {
  const state = await workflowState(reads, caller, workflowId, tenant);
  if (!state.saga) throw new EffectdError('not_found', `no saga in workflow ${workflowId}`, { workflowId });
  const { started, compensating, finished } = state.saga;
  const last = Math.max(started.at, compensating?.at ?? 0, finished?.at ?? 0, ...[...state.effects.values()].map((e) => e.lastEventAt));
  return { outcome: sagaOutcome(await sagaView(reads, caller, workflowId, tenant)), startedAt: started.at, lastUpdatedAt: last };
}

/** `GET /v1/sagas`: the sagas this effectd runs (steps by name), and those set aside at start with why. */
export function sagaList(sagas: SagaRegistry) {
  return {
    sagas: sagas.names().map((name) => {
      const saga = sagas.get(name)!;
      return { name, version: saga.version, description: saga.description, steps: saga.steps.map((s) => ({ name: s.name, tool: s.tool, reversibility: s.reversibility, compensation: s.compensation?.name })) };
    }),
    unavailable: sagas.notAvailable().map(([name, why]) => ({ name, why })),
  };
}
