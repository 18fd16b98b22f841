import type { ToolRegistry } from '../../../../src/providers/tool-registry.js';
import { sleep, type Exchange } from '../bench-http.js';
import type { Rng } from '../rng.js';
import type { Observation, Policy, Send, ToolCall } from './policy.js';
import { observe, offersKey, providerRequest } from './provider-call.js';

/** stripe-node's defaults, on the benchmark's compressed clock. */
export const SDK_RETRY = { maxNetworkRetries: 2, initialDelayMs: 100, maxDelayMs: 400 } as const;

/**
 * A provider library with retries on (like stripe-node with maxNetworkRetries=2): one key per
 * library call, retried on connection errors, 409 and ≥500 unless the provider says
 * `Stripe-Should-Retry: false`. When the library gives up, the model re-issues the call, and the
 * library makes a new key for it.
 */
export class SdkRetryPolicy implements Policy {
  readonly name = 'sdk-retry';
  readonly obeysUnknown = false;
  readonly durableJournal = false;

  constructor(private readonly tools: ToolRegistry, private readonly send: Send, private readonly rng: Rng) {}

  async call(call: ToolCall): Promise<Observation> {
    const tool = this.tools.get(call.intent.tool)!;
    const key = offersKey(tool) ? `stripe-node-retry-${this.rng.uuid()}` : null;
    let result: Exchange = await providerRequest(tool, call.args, key, this.send, call.signal);
    for (let retry = 1; retry <= SDK_RETRY.maxNetworkRetries && shouldRetry(result); retry++) {
      // stripe-node: exponential backoff with jitter, capped.
      const base = Math.min(SDK_RETRY.initialDelayMs * 2 ** (retry - 1), SDK_RETRY.maxDelayMs);
      await sleep(base * (0.75 + 0.25 * this.rng.next()), call.signal);
      if (call.signal.aborted) break;
      result = await providerRequest(tool, call.args, key, this.send, call.signal);
    }
    return observe(tool, result);
  }
}

function shouldRetry(result: Exchange): boolean {
  if (result.kind === 'cancelled') return false;
  if (result.kind !== 'response') return true;
  const hint = result.headers['stripe-should-retry'];
  if (hint === 'false') return false;
  if (hint === 'true') return true;
  return result.status === 409 || result.status >= 500;
}
