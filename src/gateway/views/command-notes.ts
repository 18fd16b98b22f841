import { argsField, slotField, stepField, tenantField, toolField, workflowIdField } from '../../core/effect-command.js';

/**
 * What the shared identity fields of src/core/effect-command.ts mean, for the document: wherever
 * one of these very schemas appears (effect commands, decisions, sagas, URLs) it carries this text.
 */
export const FIELD_NOTES: ReadonlyMap<object, string> = new Map<object, string>([
  [workflowIdField, 'The workflow: one user task, named by the id the harness keeps across resumes (a thread or conversation id, not a run or process id made at start; docs/identity.md). It comes from the harness, never from the model.'],
  [stepField, 'The position of this effect in the workflow\'s plan: a whole number ≥ 0 or a name (e.g. 3 or "charge"). Fixed when the step is first planned; a retry resends the same step.'],
  [slotField, 'For one-to-many intents ("email 5 recipients"): each slot is its own effect (e.g. 0 or "alice@example.com"). Default "0".'],
  [tenantField, 'At most a request: the tenant is the caller\'s own, and naming another one is forbidden unless the credential acts for every tenant (`*`).'],
  [toolField, 'The tool to run (GET /v1/tools lists them), or `saga:<name>` to start that saga with `args` as its input.'],
  [argsField, 'The tool\'s arguments (GET /v1/tools gives each tool\'s JSON Schema). They are canonicalized by the tool\'s contract: 4900 and "49.00" are one amount. Keys `__proto__`, `constructor` and `prototype` are refused.'],
]);
