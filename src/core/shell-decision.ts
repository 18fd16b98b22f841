import { currentAttempt, effectStatus, type EffectState } from './effect-state.js';

/**
 * What the deterministic shell does with a submitted effect, decided from the folded stream alone
 * (docs/design.md, "The deterministic shell", steps 2–6).
 */
export type ShellDecision =
  | { kind: 'declare' }
  | { kind: 'replay' }
  | { kind: 'conflict'; recordedDigest: string }
  | { kind: 'in-flight'; leaseUntil: number }
  | { kind: 'claim' }
  | { kind: 'retry-same-key'; providerKey: string }
  | { kind: 'hold-unknown'; why: string }
  /** Held by the content index: re-check the effect it matched before answering. */
  | { kind: 'held' };

export interface KeyPolicy {
  /** The provider deduplicates requests carrying the same key (so a resend is answered, not re-executed). */
  dedupesByKey: boolean;
}

export function decideDispatch(effect: EffectState | undefined, intentDigest: string, now: number, policy: KeyPolicy): ShellDecision {
  if (!effect) return { kind: 'declare' };
  if (effect.declared.intentDigest !== intentDigest) return { kind: 'conflict', recordedDigest: effect.declared.intentDigest };
  const status = effectStatus(effect, now);
  switch (status) {
    case 'committed':
    case 'failed_before_effect':
    case 'terminal_failure':
    case 'escalated':
      return { kind: 'replay' };
    case 'declared':
      return { kind: 'claim' };
    case 'held':
      return { kind: 'held' };
    case 'dispatching':
      return { kind: 'in-flight', leaseUntil: currentAttempt(effect)!.started.leaseUntil };
    case 'unknown': {
      const last = currentAttempt(effect)?.started;
      if (!last || last.providerKey === null) return { kind: 'hold-unknown', why: 'the tool has no idempotency key; only a lookup or a human can tell' };
      if (!policy.dedupesByKey) return { kind: 'hold-unknown', why: 'the provider does not deduplicate by key' };
      if (last.keyExpiresAt === null || now >= last.keyExpiresAt) return { kind: 'hold-unknown', why: 'the provider key has expired, so a resend could act twice' };
      return { kind: 'retry-same-key', providerKey: last.providerKey };
    }
  }
}
