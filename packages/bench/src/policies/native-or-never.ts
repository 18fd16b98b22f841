import { createHash } from 'node:crypto';
import type { ToolRegistry } from '../../../../src/providers/tool-registry.js';
import type { Observation, Policy, Send, ToolCall } from './policy.js';
import { observe, offersKey, providerRequest } from './provider-call.js';

/**
 * The careful baseline without a ledger: use the provider's own key when the tool offers one,
 * derived from (workflow, step) so every retry of a step carries it (Temporal's advice); when the
 * tool offers none, never retry a mutation after an ambiguous error — report it open instead.
 */
export class NativeOrNeverPolicy implements Policy {
  readonly name = 'native-or-never';
  readonly obeysUnknown = false;
  readonly durableJournal = false;

  constructor(private readonly tools: ToolRegistry, private readonly send: Send) {}

  async call(call: ToolCall): Promise<Observation> {
    const tool = this.tools.get(call.intent.tool)!;
    const keyed = offersKey(tool);
    const key = keyed ? `non-${createHash('sha256').update(JSON.stringify([call.workflowId, call.step, call.intent.slot])).digest('hex').slice(0, 40)}` : null;
    const observation = observe(tool, await providerRequest(tool, call.args, key, this.send, call.signal));
    if (!keyed && observation.kind === 'error' && observation.ambiguous) {
      return { kind: 'unknown', text: `${observation.text}; ${tool.name} offers no key, so native-or-never does not retry it` };
    }
    return observation;
  }
}
