import type { EffectState, EffectStatus } from '../core/effect-state.js';
import { isEffectEvent } from '../core/events.js';
import { evolveEffect } from '../core/fold.js';
import type { Ledger } from '../ledger/ledger.port.js';

/**
 * Effects by state, kept by catching up on the global order: each refresh reads only what was
 * appended since the last one.
 */
export class EffectStatesProjection {
  private position = 0;
  private readonly effects = new Map<string, EffectState>();
  private readonly byContent = new Map<string, Set<string>>();

  constructor(private readonly ledger: Ledger) {}

  async refresh(): Promise<void> {
    for (;;) {
      const page = await this.ledger.readAll(this.position, 5_000);
      for (const { event, position } of page) {
        if (position <= this.position) continue; // a concurrent refresh already applied it
        this.position = position;
        if (!isEffectEvent(event)) continue;
        this.effects.set(event.effectId, evolveEffect(this.effects.get(event.effectId), event));
        if (event.type === 'EffectDeclared' && event.contentKey) {
          const ids = this.byContent.get(`${event.tenant}\n${event.contentKey}`) ?? new Set<string>();
          this.byContent.set(`${event.tenant}\n${event.contentKey}`, ids.add(event.effectId));
        }
      }
      if (page.length < 5_000) return;
    }
  }

  all(): EffectState[] {
    return [...this.effects.values()];
  }

  /** Effects of one tenant with the given content key (the content index). */
  withContent(tenant: string, contentKey: string): EffectState[] {
    return [...(this.byContent.get(`${tenant}\n${contentKey}`) ?? [])].map((id) => this.effects.get(id)!);
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
