import type { SagaRegistry } from '../../shell/saga-registry.js';
import type { SagaView } from '../../shell/saga-runner.js';
import { tenantOf, type Caller } from '../caller.js';
import { workflowIdOf } from '../inputs.js';
import type { Reads } from '../reads.js';

/** A saga's steps, states and compensations, in order. */
export function sagaView(reads: Pick<Reads, 'sagaRunner'>, caller: Caller, workflowId: string, tenant?: string): Promise<SagaView> {
  return reads.sagaRunner.view(tenantOf(caller, tenant), workflowIdOf(workflowId));
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
