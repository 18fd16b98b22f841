import { lifecycleTable, type LifecycleRow } from '../../core/effect-lifecycle.js';
import type { EffectStatus } from '../../core/effect-status.js';

/** One status of the lifecycle table as `GET /v1/meta` answers it: the status and every flag of its row. */
export type LifecycleView = { status: EffectStatus } & LifecycleRow;

/**
 * `GET /v1/meta`: the effect lifecycle table (src/core/effect-lifecycle.ts) as data, so the console
 * and other clients take their sets of states from effectd instead of keeping lists of their own.
 */
export function serviceMeta(): { lifecycle: LifecycleView[] } {
  return {
    lifecycle: lifecycleTable().map(({ status, row }) => Object.assign({ status }, row, { events: [...row.events] })),
  };
}
