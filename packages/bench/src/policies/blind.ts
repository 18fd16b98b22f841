import type { ToolRegistry } from '../../../../src/providers/tool-registry.js';
import type { Rng } from '../rng.js';
import type { Observation, Policy, Send, ToolCall } from './policy.js';
import { observe, offersKey, providerRequest } from './provider-call.js';

/** The model retries whatever failed; every call carries a fresh key (as an SDK that auto-generates one per call). */
export class BlindPolicy implements Policy {
  readonly name = 'blind';
  readonly obeysUnknown = false;
  readonly durableJournal = false;

  constructor(private readonly tools: ToolRegistry, private readonly send: Send, private readonly rng: Rng) {}

  async call(call: ToolCall): Promise<Observation> {
    const tool = this.tools.get(call.intent.tool)!;
    const key = offersKey(tool) ? `blind-${this.rng.uuid()}` : null;
    return observe(tool, await providerRequest(tool, call.args, key, this.send, call.signal));
  }
}
