import type { ListCursors } from './list-cursors.js';

/**
 * Where a page of `GET /v1/workflows` ended, handed to the caller as an opaque string. Workflows
 * are listed most recently active first, ties by workflow id then tenant, so a page continues
 * strictly after the last workflow the previous one showed (keyset paging, as for effects).
 */
export interface WorkflowListPosition {
  lastEventAt: number;
  workflowId: string;
  tenant: string;
}

const PREFIX = 'w1.';

export function encodeWorkflowCursor(cursors: ListCursors, position: WorkflowListPosition): string {
  // Sealed like the effect list's (a MAC under the instance secret): a forged cursor is refused.
  return cursors.seal(PREFIX, [position.lastEventAt, position.workflowId, position.tenant]);
}

/** The position a cursor names, or undefined when the string is not a cursor effectd gave out. */
export function decodeWorkflowCursor(cursors: ListCursors, cursor: string): WorkflowListPosition | undefined {
  try {
    const value: unknown = cursors.unseal(PREFIX, cursor);
    if (!Array.isArray(value) || value.length !== 3) return undefined;
    const [lastEventAt, workflowId, tenant] = value as unknown[];
    if (typeof lastEventAt !== 'number' || !Number.isFinite(lastEventAt) || typeof workflowId !== 'string' || workflowId === '' || typeof tenant !== 'string' || tenant === '') return undefined;
    return { lastEventAt, workflowId, tenant };
  } catch {
    return undefined;
  }
}

const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The list order: most recently active first, then by workflow id, then by tenant. */
export function compareWorkflows(a: WorkflowListPosition, b: WorkflowListPosition): number {
  return b.lastEventAt - a.lastEventAt || text(a.workflowId, b.workflowId) || text(a.tenant, b.tenant);
}
