import { createHmac, hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** Where an effect sits in a workflow's plan. Comes from the harness, never from the model. */
export interface EffectAddress {
  tenant: string;
  workflowId: string;
  step: string;
  slot: string;
}

/** The provider's own scope for keys (account, region, endpoint…): another scope gets another key. */
export type ProviderScope = Record<string, string>;

const EFFECT_ID_PREFIX = 'eff_';
const PROVIDER_KEY_PREFIX = 'efd-';

/**
 * effectId = HMAC-SHA256(server secret, tenant ∣ workflowId ∣ step ∣ slot).
 * The parts are framed as a JSON array so no choice of separators inside them can collide.
 */
export function deriveEffectId(secret: Buffer, address: EffectAddress): string {
  const framed = JSON.stringify([address.tenant, address.workflowId, address.step, address.slot]);
  return EFFECT_ID_PREFIX + createHmac('sha256', secret).update(framed).digest('hex').slice(0, 40);
}

/**
 * The key the provider sees. 47 ASCII characters in 33–126, which fits Stripe (255), AWS client
 * tokens (64) and Resend (256). Keyed by the secret, so it can't be guessed from business arguments.
 */
export function deriveProviderKey(secret: Buffer, effectId: string, scope: ProviderScope): string {
  const mac = createHmac('sha256', secret).update(`provider-key\n${effectId}\n${canonicalJson(scope)}`);
  return PROVIDER_KEY_PREFIX + mac.digest('base64url');
}

/** The reference stamped into the effect (metadata, header, line) so a lookup can find it later. */
export function deriveReference(effectId: string): string {
  return effectId;
}

export function sha256Hex(text: string): string {
  // One-shot (Node ≥ 20.12): the same digest of the same UTF-8 bytes as createHash().update().digest(), without a Hash object.
  return hash('sha256', text, 'hex');
}
