import { canonicalJson } from './canonical-json.js';
import { sha256Hex } from './identity.js';
import type { CanonicalArgs } from './arg-fields.js';

/** What an effect does, in canonical form: the same business request always has the same digest. */
export interface Intent {
  tool: string;
  contractVersion: number;
  args: CanonicalArgs;
  /** Who or what the effect acts on (a customer, a recipient, a resource name), for people and the content index. */
  target: string;
}

export function intentDigest(intent: Intent): string {
  return sha256Hex(canonicalJson(intent));
}
