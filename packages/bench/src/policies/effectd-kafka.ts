import type { JsonObject } from '@bufbuild/protobuf';
import type { EffectAnswer, EffectClient } from '../../../../src/sdk/effect-client.js';
import { sleep } from '../bench-http.js';
import type { Observation, Policy, Send, ToolCall } from './policy.js';
import { headers, type Route } from './effectd.js';

const WITH_A_HUMAN = new Set(['escalated', 'terminal_failure']);
/** How long one submit waits for its answer before the harness calls it `unknown` and submits again. */
export const KAFKA_ANSWER_MS = 2_000;

/**
 * effectd through its Kafka ingress, as an agent's harness uses the SDK: every tool call is an
 * effect command published with EffectClient (keyed by workflowId, so a workflow's commands share a
 * partition); an `unknown` answer — effectd's, or no answer in time — is followed by the SAME
 * command again (same workflowId and step) until it settles: redelivery is the ledger's problem.
 */
export class KafkaEffectdPolicy implements Policy {
  readonly name = 'effectd';
  readonly obeysUnknown = true;
  readonly durableJournal = true;
  /** The arguments each step was first submitted with: effectd binds the step to them, and the harness resubmits those. */
  private readonly decided = new Map<string, Record<string, unknown>>();

  constructor(private readonly client: EffectClient, private readonly http: Route, private readonly send: Send, private readonly deadline: number) {}

  async call(call: ToolCall): Promise<Observation> {
    const step = `${call.step}#${call.intent.slot}`;
    if (!this.decided.has(step)) this.decided.set(step, call.args);
    const answer = await this.client.submit({
      workflowId: call.workflowId, step: call.step, slot: call.intent.slot, tool: call.intent.tool, args: call.args as JsonObject, principal: 'bench-agent',
      ...(call.repeat ? { repeat: call.repeat } : {}),
    }, { timeoutMs: Math.max(100, Math.min(KAFKA_ANSWER_MS, this.deadline - Date.now())) });
    return observation(answer);
  }

  /** Submits the same command again until effectd settles it, hands it to a human, or the deadline passes. */
  async settle(observation: Extract<Observation, { kind: 'unknown' }>, call: ToolCall, deadline: number): Promise<Observation> {
    let last: Observation = observation;
    while (Date.now() < Math.min(deadline, this.deadline)) {
      if (last.kind !== 'unknown') return last;
      if (last.state !== undefined && WITH_A_HUMAN.has(last.state)) return last;
      await sleep(250);
      // The same command again: the step with the arguments it was decided with.
      last = await this.call({ ...call, args: this.decided.get(`${call.step}#${call.intent.slot}`) ?? call.args });
    }
    return last;
  }

  /** Effects of this workflow effectd handed to a human, by its own account (read over HTTP from a live instance). */
  async escalations(workflowId: string): Promise<number> {
    const endpoint = this.http();
    const result = await this.send({ method: 'GET', url: `${endpoint.url}/v1/workflows/${encodeURIComponent(workflowId)}`, headers: headers(endpoint, false), timeoutMs: 5_000 });
    if (result.kind !== 'response' || result.status !== 200) return 0;
    const effects = (result.body as { effects?: { state?: string }[] }).effects ?? [];
    return effects.filter((e) => e.state !== undefined && WITH_A_HUMAN.has(e.state)).length;
  }
}

export function observation(answer: EffectAnswer): Observation {
  if (answer.error?.code === 'intent_conflict') return { kind: 'conflict', text: answer.message };
  if (answer.error) return { kind: 'error', ambiguous: false, text: `${answer.error.code}: ${answer.error.message}` };
  switch (answer.status) {
    case 'done':
      return { kind: 'done', text: answer.message, ...(answer.receipt ? { receipt: answer.receipt } : {}), ...(answer.state === 'held' ? { held: true } : {}) };
    case 'not_done':
      return { kind: 'not_done', text: answer.message };
    case 'unknown': {
      // A held step whose match is with a human is, for the agent, with a human too.
      const matched = answer.state === 'held' ? /(?:which is|on the same target is) (\w+)/.exec(answer.reason ?? '')?.[1] : undefined;
      const state = matched !== undefined && WITH_A_HUMAN.has(matched) ? matched : answer.state;
      return { kind: 'unknown', text: answer.message, ...(answer.effectId ? { effectId: answer.effectId } : {}), ...(state ? { state } : {}) };
    }
  }
}
