import type { AgentOutcome } from '../core/agent-outcome.js';
import type { SagaView } from './saga-runner.js';

/** The tool name that starts a saga through the effect-command wire schema: `saga:<name>`, args = the saga's input. */
export const SAGA_TOOL_PREFIX = 'saga:';

export function sagaNameOf(tool: string): string | undefined {
  return tool.startsWith(SAGA_TOOL_PREFIX) ? tool.slice(SAGA_TOOL_PREFIX.length) : undefined;
}

/** A saga's state as the three-state answer agents read: completed → done, compensated → not_done, else unknown. */
export function sagaOutcome(view: SagaView): AgentOutcome {
  const base = { effectId: '', tool: `${SAGA_TOOL_PREFIX}${view.saga}`, target: `workflow ${view.workflowId}`, replayed: false, state: 'declared' as const };
  const steps = view.steps.map((s) => `${s.name}: ${s.state}${s.compensation && s.compensation.state !== 'not started' ? ` (compensation ${s.compensation.state})` : ''}`).join('; ');
  if (view.status === 'completed') return { ...base, status: 'done', state: 'committed', message: `done: saga ${view.saga} for workflow ${view.workflowId} completed (${steps}).` };
  if (view.status === 'compensated') return { ...base, status: 'not_done', state: 'failed_before_effect', reason: view.why, message: `not_done: saga ${view.saga} for workflow ${view.workflowId} failed and was compensated (${view.why}; ${steps}); it is safe to start it again under a new workflowId.` };
  return {
    ...base, status: 'unknown', state: 'unknown', ...(view.why ? { reason: view.why } : {}),
    message: `unknown: saga ${view.saga} for workflow ${view.workflowId} is ${view.status}${view.why ? ` (${view.why})` : ''}; effectd carries it on (${steps}). Do not start it again; ask with GET /v1/sagas/${view.workflowId}.`,
  };
}
