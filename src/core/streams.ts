/** One stream per workflow, named by this helper alone. Parts are URI-encoded so no id can forge another's stream. */
export function workflowStream(tenant: string, workflowId: string): string {
  return `workflow-${encodeURIComponent(tenant)}-${encodeURIComponent(workflowId)}`;
}
