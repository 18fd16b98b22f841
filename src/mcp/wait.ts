import { EffectdError } from '../core/errors.js';
import { META } from './identity.js';

/**
 * The answer budget a harness asks for in `_meta["dev.effectd/waitMs"]`: how long a call may wait,
 * after a lost reply, for effectd to settle it with the provider (0: answer `unknown` at once).
 * Absent: the tool's default. Anything but a whole number of ms ≥ 0 is refused, naming the key.
 */
export function waitFrom(meta: Record<string, unknown> | undefined): number | undefined {
  const value = meta?.[META.waitMs];
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  throw new EffectdError('invalid_command', `_meta["${META.waitMs}"] is how long the answer may wait for a lost reply to be settled: a whole number of milliseconds ≥ 0 (0 answers at once), not ${JSON.stringify(value)}`, {
    fields: [{ path: `_meta["${META.waitMs}"]`, message: 'a whole number of milliseconds ≥ 0' }],
  });
}
