import { canonicalJson } from './canonical-json.js';
import { CONTENT_HOLDING_STATUSES, TARGET_HOLDING_STATUSES } from './effect-lifecycle.js';
import { effectStatus, type EffectState } from './effect-state.js';
import { sha256Hex } from './identity.js';
import type { CanonicalArgs } from './arg-fields.js';

/**
 * What makes two effects "the same thing" in business terms: the tool, its target and the fields
 * its contract names (invoice + amount for a charge, recipient + template for an email). Keys,
 * steps and wording outside those fields don't count.
 */
export function contentKeyOf(tool: string, target: string, args: CanonicalArgs, businessFields: readonly string[] | undefined): string {
  const fields = businessFields ?? Object.keys(args);
  const picked: Record<string, unknown> = {};
  for (const field of fields) picked[field] = args[field] ?? null;
  return `content-${sha256Hex(canonicalJson({ tool, target, fields: picked })).slice(0, 32)}`;
}

/**
 * The effect of the same content that holds a new step back, preferring one that is done.
 * A declared repeat never matches (the caller skips the check), and neither does an effect that
 * proved not to have happened, nor another held one.
 */
export function findContentMatch(effects: Iterable<EffectState>, contentKey: string, excludeEffectId: string, now: number): EffectState | undefined {
  let open: EffectState | undefined;
  for (const effect of effects) {
    if (effect.effectId === excludeEffectId || effect.declared.contentKey !== contentKey) continue;
    const status = effectStatus(effect, now);
    if (status === 'committed') return effect;
    // It happened, or may have (the lifecycle table's holdsContent).
    if (CONTENT_HOLDING_STATUSES.has(status)) open ??= effect;
  }
  return open;
}

/**
 * The first effect (other than `excludeEffectId`) whose status is one of `holding`. By default the
 * lifecycle table's holdsTarget: while an effect on a tool + target may have happened and is not
 * settled, "do not start another X for Y" — a new effect on the same target waits, whatever its
 * arguments (a model's "repair" with another amount).
 */
export function findTargetHold(effects: Iterable<EffectState>, excludeEffectId: string, now: number, holding: ReadonlySet<string> = TARGET_HOLDING_STATUSES): EffectState | undefined {
  for (const effect of effects) if (effect.effectId !== excludeEffectId && holding.has(effectStatus(effect, now))) return effect;
  return undefined;
}
