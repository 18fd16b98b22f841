import { EFFECT_STATUSES, HUMAN_STATUSES, UNKNOWN_CLOCK_STATUSES } from '../core/effect-lifecycle.js';
import { effectStatus, unknownSinceAt, type EffectState, type EffectStatus } from '../core/effect-state.js';

/** What the ledger says right now, shaped for gauges: counts and ages per tool, never per effect. */
export interface EffectGauges {
  byToolAndState: { tool: string; state: EffectStatus; count: number }[];
  /** Escalated or terminal effects: nothing moves them but an operator. */
  waitingForHuman: { tool: string; state: EffectStatus; count: number }[];
  /** Age of the oldest effect still unknown (or escalated), per tool. */
  oldestUnknownSeconds: { tool: string; seconds: number }[];
}

const HUMAN = HUMAN_STATUSES;
const STATES: readonly EffectStatus[] = EFFECT_STATUSES;
const UNSETTLED_UNKNOWN = UNKNOWN_CLOCK_STATUSES;

/**
 * `effects` are those whose state can still change (the open ones); `settled` counts the effects
 * settled for good, per tool and state, so no scrape needs every effect in memory.
 */
export function effectGauges(effects: Iterable<EffectState>, now: number, settled: Iterable<{ tool: string; state: EffectStatus; count: number }> = []): EffectGauges {
  const counts = new Map<string, { tool: string; state: EffectStatus; count: number }>();
  for (const row of settled) counts.set(`${row.tool}\u0000${row.state}`, { ...row });
  const oldest = new Map<string, number>();
  for (const effect of effects) {
    const { tool } = effect.declared;
    const state = effectStatus(effect, now);
    const key = `${tool}\u0000${state}`;
    const row = counts.get(key) ?? { tool, state, count: 0 };
    row.count++;
    counts.set(key, row);
    if (UNSETTLED_UNKNOWN.has(state)) {
      const since = unknownSinceAt(effect, now);
      if (since !== undefined) oldest.set(tool, Math.min(oldest.get(tool) ?? Infinity, since));
    }
  }
  // Explicit zeros for every tool seen, so "nothing is unknown" is a 0 on the dashboard, not a gap.
  const tools = [...new Set([...counts.values()].map((r) => r.tool))];
  const row = (tool: string, state: EffectStatus) => counts.get(`${tool}\u0000${state}`) ?? { tool, state, count: 0 };
  const byToolAndState = [...tools.flatMap((tool) => STATES.map((state) => row(tool, state))), ...[...counts.values()].filter((r) => !STATES.includes(r.state))];
  const waitingForHuman = tools.flatMap((tool) => [...HUMAN].map((state) => row(tool, state)));
  return {
    byToolAndState,
    waitingForHuman,
    oldestUnknownSeconds: [...oldest].map(([tool, since]) => ({ tool, seconds: Math.max(0, (now - since) / 1000) })),
  };
}
