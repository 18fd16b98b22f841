import type { EffectState, EffectStatus } from '../core/effect-state.js';
import { evolveEffect } from '../core/fold.js';
import type { Ledger } from '../ledger/ledger.port.js';

/**
 * Effects by state, kept by catching up on the global order: each refresh reads only what was
 * appended since the last one.
 */
export class EffectStatesProjection {
  private position = 0;
  private readonly effects = new Map<string, EffectState>();

  constructor(private readonly ledger: Ledger) {}

  async refresh(): Promise<void> {
    for (;;) {
      const page = await this.ledger.readAll(this.position, 5_000);
      for (const recorded of page) {
        this.effects.set(recorded.event.effectId, evolveEffect(this.effects.get(recorded.event.effectId), recorded.event));
        this.position = recorded.position;
      }
      if (page.length < 5_000) return;
    }
  }

  all(): EffectState[] {
    return [...this.effects.values()];
  }

  get(effectId: string): EffectState | undefined {
    return this.effects.get(effectId);
  }

  countByState(now: number, statusOf: (e: EffectState, now: number) => EffectStatus): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const effect of this.effects.values()) {
      const state = statusOf(effect, now);
      counts[state] = (counts[state] ?? 0) + 1;
    }
    return counts;
  }
}
