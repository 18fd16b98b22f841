import type { EffectStatus } from './effect-status.js';

/** What an agent is told. Three states, never two. */
export type AgentStatus = 'done' | 'not_done' | 'unknown';

export interface AgentOutcome {
  status: AgentStatus;
  effectId: string;
  /** The ledger's state of the effect, for harnesses that want the detail. */
  state: EffectStatus;
  tool: string;
  target: string;
  receipt?: string;
  reason?: string;
  /** True when this answer came from the ledger without calling the provider. */
  replayed: boolean;
  /** For `unknown`: the reference stamped into the effect, what is being checked, and when to ask again. */
  reference?: string;
  checking?: string;
  expectAnswerBy?: string;
  /** After a lost reply: how long this answer waited for the truth (inline settle, EffectRunner.settle in src/shell/effect-runner.ts). */
  waitedMs?: number;
  /** One sentence a model can't misread. */
  message: string;
}
