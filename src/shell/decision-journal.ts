import { EffectdError, invalidCommand } from '../core/errors.js';
import type { DecisionRecorded } from '../core/events.js';
import { workflowStream } from '../core/streams.js';
import type { ShellCore } from './shell-core.js';
import type { Decision } from './workflow-store.js';

import type { DecisionInput } from './shell-port.js';
export type { DecisionInput };

/**
 * The model's decisions, journaled in the workflow stream before anything acts on them. A step is
 * decided once: a resumed task gets the recorded decision back, and a submission can't rephrase it.
 */
export class DecisionJournal {
  constructor(private readonly core: ShellCore) {}

  async decide(tenant: string, workflowId: string, input: DecisionInput, recordedBy: string): Promise<{ decision: DecisionRecorded; replayed: boolean }> {
    const { core } = this;
    const tool = core.deps.tools.get(input.tool);
    if (!tool) throw new EffectdError('unknown_tool', `unknown tool "${input.tool}"; known tools: ${core.deps.tools.list().map((t) => t.name).join(', ')}`, { tool: input.tool });
    const args = tool.schema.safeParse(input.args);
    if (!args.success) throw invalidCommand(`args do not fit tool ${tool.name}`, args.error.issues, ['args']);
    return core.update(workflowStream(tenant, workflowId), (workflow): Decision<{ decision: DecisionRecorded; replayed: boolean }> => {
      const recorded = workflow.decisions.get(input.step);
      if (recorded) return { answer: { decision: recorded, replayed: true } };
      const decision: DecisionRecorded = {
        type: 'DecisionRecorded', v: 1, at: core.now(), step: input.step, tool: input.tool, args: input.args, recordedBy,
        ...(input.decidedBy ? { decidedBy: input.decidedBy } : {}),
      };
      return { append: [decision], answer: () => ({ decision, replayed: false }) };
    });
  }
}
