import { findContentMatch } from '../core/content-index.js';
import { workflowStream } from '../core/streams.js';
import type { TenantContentIndex } from '../shell/shell-core.js';
import type { EffectStatesProjection } from './effect-states-projection.js';

/**
 * The content index across a tenant's workflows, within a window. It reads the effect-states
 * projection, caught up just before the check; two workflows racing on the same content in the
 * same instant can both pass (only the per-workflow check is serialized by the ledger).
 */
export function tenantContentIndex(effectStates: EffectStatesProjection, windowMs: number): TenantContentIndex | undefined {
  if (windowMs <= 0) return undefined;
  return {
    async find(tenant, contentKey, excludeEffectId, now) {
      await effectStates.refresh();
      const recent = effectStates.withContent(tenant, contentKey).filter((e) => e.declared.at >= now - windowMs);
      const match = findContentMatch(recent, contentKey, excludeEffectId, now);
      return match ? { effect: match, stream: workflowStream(tenant, match.declared.workflowId) } : undefined;
    },
  };
}
