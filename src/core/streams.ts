/**
 * One stream per workflow, named by this helper alone. Both parts are URI-encoded and joined by
 * "/", which encoding never produces, so no tenant/workflow pair can forge another's stream
 * ("a-b"+"c" and "a"+"b-c" stay apart).
 */
export function workflowStream(tenant: string, workflowId: string): string {
  return `workflow-${encodeURIComponent(tenant)}/${encodeURIComponent(workflowId)}`;
}
