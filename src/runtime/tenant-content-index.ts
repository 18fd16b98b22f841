import { findContentMatch } from '../core/content-index.js';
import { workflowStream } from '../core/streams.js';
import type { TenantContentIndex } from '../shell/shell-port.js';
import type { OpenEffectsProjection } from './open-effects-projection.js';

/**
 * The content index across a tenant's workflows, within a window. It reads the read side's recent
 * effects (at most its `recentLimit`), caught up just before the check; two workflows racing on
 * the same content in the same instant can both pass (only the per-workflow check is serialized by the ledger).
 */
/** Whether a tenant content window is on (0, the default: off): the read side keeps its content index only then. */
export function tenantWindowOn(windowMs: number): boolean {
  return windowMs > 0;
}

export function tenantContentIndex(readSide: OpenEffectsProjection, windowMs: number): TenantContentIndex | undefined {
  if (!tenantWindowOn(windowMs)) return undefined;
  return {
    async find(tenant, contentKey, excludeEffectId, now) {
      await readSide.catchUp();
      const recent = readSide.withContent(tenant, contentKey).filter((e) => e.declared.at >= now - windowMs);
      const match = findContentMatch(recent, contentKey, excludeEffectId, now);
      return match ? { effect: match, stream: workflowStream(tenant, match.declared.workflowId) } : undefined;
    },
  };
}
