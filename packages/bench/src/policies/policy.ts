import type { Exchange, ExchangeRequest } from '../bench-http.js';
import type { McpPolicyName, PolicyName } from '../names.js';
import type { IntentSpec } from '../workloads.js';

/** What the model sees after one tool call: three honest states from effectd, raw error texts from the baselines. */
export type Observation =
  /** `held`: effectd's content index answered for another step of the same content ("already done"), nothing was sent for this one. */
  | { kind: 'done'; receipt?: string; text: string; held?: boolean }
  /** Proven not to have happened, or refused: safe to try again (for effectd: as a new step). */
  | { kind: 'not_done'; text: string }
  /** A raw error text; `ambiguous` when the effect may have happened (timeout, reset, 5xx, 409, 429, cancelled). */
  | { kind: 'error'; text: string; ambiguous: boolean }
  /** The outcome is open and the harness knows it (effectd's `unknown`, or a retry native-or-never refused). */
  | { kind: 'unknown'; text: string; effectId?: string; state?: string }
  /** effectd 422: the same step was declared with other arguments. */
  | { kind: 'conflict'; text: string };

export interface ToolCall {
  intent: IntentSpec;
  workflowId: string;
  /** The harness's step for this call: the intent's own, or a new one after the model decided again. */
  step: string;
  args: Record<string, unknown>;
  /** The repeat declaration of this step: the planned step of a declared repeat carries it; a re-decision does not. */
  repeat?: { reason: string };
  signal: AbortSignal;
}

/** The cell's way out to a provider or to effectd: applies around-the-caller faults (e.g. a pause past key retention). */
export type Send = (request: ExchangeRequest) => Promise<Exchange>;

export interface Policy {
  readonly name: PolicyName | McpPolicyName;
  /** One tool call as the model makes it; resolves to what the model is told. */
  call(call: ToolCall): Promise<Observation>;
  /**
   * The harness forbids starting another effect while one is `unknown` (effectd's "do not start
   * another"): the agent waits with `settle` instead of deciding again.
   */
  readonly obeysUnknown: boolean;
  /** The harness journal (step, arguments) survives a crash or a move to another worker. */
  readonly durableJournal: boolean;
  /** Waits for an unknown effect to settle, by asking effectd (polling) until `deadline`. */
  settle?(observation: Extract<Observation, { kind: 'unknown' }>, call: ToolCall, deadline: number): Promise<Observation>;
}
