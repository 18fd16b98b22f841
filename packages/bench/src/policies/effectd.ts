import { sleep, type Exchange } from '../bench-http.js';
import type { EffectdEndpoint } from '../effectd-fleet.js';
import type { Observation, Policy, Send, ToolCall } from './policy.js';
import { CodedError } from '../../../../src/shared/coded-error.js';

interface OutcomeBody {
  status?: 'done' | 'not_done' | 'unknown';
  state?: string;
  effectId?: string;
  receipt?: string;
  reason?: string;
  message?: string;
  error?: string;
}

/** Where the agent's harness reaches effectd right now (it changes when the workflow moves or effectd restarts). */
export type Route = () => EffectdEndpoint;

const SETTLED = new Set(['committed', 'failed_before_effect']);
/** States a human has to settle: waiting longer will not change them. */
const WITH_A_HUMAN = new Set(['escalated', 'terminal_failure']);
const POLL_MS = 100;

/**
 * Every tool call goes through effectd's public HTTP API, as a harness would send it: the harness
 * owns workflowId and step, redelivers a command effectd never answered (crash, restart), and on
 * `unknown` waits by asking effectd (GET /v1/effects/:id) instead of starting another.
 */
export class EffectdPolicy implements Policy {
  readonly name = 'effectd';
  readonly obeysUnknown = true;
  readonly durableJournal = true;

  /**
   * `answerAtOnce`: the harness asks for answers without inline settle (`Prefer: wait=0`), as the
   * re-decision column does: it measures the content index when the model decides again after an
   * `unknown`, which an answer that waited for the truth would mostly spare it.
   */
  constructor(private route: Route, private readonly send: Send, private readonly deadline: number, private readonly options: { answerAtOnce?: boolean } = {}) {}

  /** Effects of this workflow effectd handed to a human, by its own account. */
  async escalations(workflowId: string): Promise<number> {
    const endpoint = this.route();
    const result = await this.send({ method: 'GET', url: `${endpoint.url}/v1/workflows/${encodeURIComponent(workflowId)}`, headers: headers(endpoint, false), timeoutMs: 5_000 });
    if (result.kind !== 'response' || result.status !== 200) return 0;
    const effects = (result.body as { effects?: { state?: string }[] }).effects ?? [];
    return effects.filter((e) => e.state !== undefined && WITH_A_HUMAN.has(e.state)).length;
  }

  /** Where the harness reaches effectd now. */
  endpoint(): EffectdEndpoint {
    return this.route();
  }

  /** The workflow moved to another instance: later calls and polls go there. */
  moveTo(route: Route): void {
    this.route = route;
  }

  async call(call: ToolCall): Promise<Observation> {
    const body = JSON.stringify({
      workflowId: call.workflowId, step: call.step, slot: call.intent.slot, tool: call.intent.tool, args: call.args, principal: 'bench-agent',
      ...(call.repeat ? { repeat: call.repeat } : {}),
    });
    for (let redelivery = 0; ; redelivery++) {
      const endpoint = this.route();
      const result = await this.send({ method: 'POST', url: `${endpoint.url}/v1/effects`, headers: { ...headers(endpoint, true), ...(this.options.answerAtOnce ? { prefer: 'wait=0' } : {}) }, body, timeoutMs: 10_000, signal: call.signal });
      if (result.kind === 'cancelled') return { kind: 'error', ambiguous: true, text: 'the call to effectd was cancelled before an answer came back' };
      if (result.kind === 'response' && result.status < 500) return answer(result);
      // effectd never answered (killed, restarting, moved): the harness redelivers the same command.
      if (Date.now() + backoff(redelivery) >= this.deadline) return { kind: 'unknown', text: `effectd did not answer before the deadline: ${describe(result)}` };
      await sleep(backoff(redelivery), call.signal);
      if (call.signal.aborted) return { kind: 'error', ambiguous: true, text: 'the call to effectd was cancelled' };
    }
  }

  /**
   * Polls the effect (GET /v1/effects/:id) until effectd settles it, hands it to a human, or the
   * cell's deadline passes. A step the content index holds answers like a resubmission would, with
   * the outcome of the step it matched ("already done: …, receipt X"); when that step proved not to
   * have happened, the held step is resubmitted, which lets effectd release and send it.
   */
  async settle(observation: Extract<Observation, { kind: 'unknown' }>, call: ToolCall, deadline: number): Promise<Observation> {
    if (!observation.effectId) return observation;
    let last: Observation = observation;
    while (Date.now() < Math.min(deadline, this.deadline)) {
      if (last.kind === 'unknown' && last.state !== undefined && WITH_A_HUMAN.has(last.state)) return last;
      await sleep(POLL_MS, call.signal);
      if (call.signal.aborted) return last;
      const endpoint = this.route();
      const result = await this.send({ method: 'GET', url: `${endpoint.url}/v1/effects/${observation.effectId}`, headers: headers(endpoint, false), timeoutMs: 5_000 });
      if (result.kind !== 'response' || result.status !== 200) continue;
      last = answer(result);
      const body = result.body as OutcomeBody;
      if (SETTLED.has(body.state ?? '') || last.kind === 'done' || last.kind === 'not_done') return last;
      if (body.state === 'held') {
        // "same content as step N, which is X" / "step N on the same target is X" (agent-outcome.ts).
        const matched = /(?:which is|on the same target is) (\w+)/.exec(body.reason ?? '')?.[1];
        if (matched !== undefined && WITH_A_HUMAN.has(matched)) return { kind: 'unknown', text: last.text, effectId: observation.effectId, state: matched };
        if (matched === 'failed_before_effect') {
          last = await this.call(call);
          if (last.kind !== 'unknown') return last;
        }
      }
    }
    return last;
  }
}

export function answer(result: Extract<Exchange, { kind: 'response' }>): Observation {
  const body = (result.body ?? {}) as OutcomeBody;
  const text = body.message ?? JSON.stringify(body);
  if (result.status === 422) return { kind: 'conflict', text };
  if (result.status === 401 || result.status === 403) throw new CodedError('invalid_config', `effectd refused the benchmark's agent credential: ${text}`);
  if (result.status === 409 || body.status === 'unknown') return { kind: 'unknown', text, ...(body.effectId ? { effectId: body.effectId } : {}), ...(body.state ? { state: body.state } : {}) };
  if (body.status === 'done') return { kind: 'done', text, ...(body.receipt ? { receipt: body.receipt } : {}), ...(body.state === 'held' ? { held: true } : {}) };
  if (body.status === 'not_done') return { kind: 'not_done', text };
  return { kind: 'error', ambiguous: false, text: `HTTP ${result.status}: ${text}` };
}

export function headers(endpoint: EffectdEndpoint, json: boolean): Record<string, string> {
  return { accept: 'application/json', ...(json ? { 'content-type': 'application/json' } : {}), ...(endpoint.token ? { authorization: `Bearer ${endpoint.token}` } : {}) };
}

function backoff(redelivery: number): number {
  return Math.min(100 * 2 ** redelivery, 800);
}

function describe(result: Exchange): string {
  if (result.kind === 'response') return `HTTP ${result.status}`;
  if (result.kind === 'cancelled') return 'cancelled';
  return result.error;
}
