import { z } from 'zod';
import { effectCommand, tenantField } from '../../core/effect-command.js';
import { decisionInput, duplicateHandlingInput, effectListQuery, releaseInput, resolutionInput, sagaStartInput, workflowIdField, workflowListQuery } from '../../gateway/inputs.js';
import { DOCS_ASSET_NAMES } from './docs-assets.js';
import {
  decisionListSchema, decisionResultSchema, effectDetailSchema, effectListSchema, effectOutcomeSchema, errorBodySchema, healthSchema, historySchema, metaSchema, readySchema,
  sagaListSchema, sagaViewSchema, whoamiSchema, workflowListSchema, workflowTimelineSchema,
} from './response-schemas.js';
import { sagaCatalogSchema } from '../../gateway/views/saga-catalog.js';
import { toolCatalogSchema } from '../../gateway/views/tool-catalog.js';

/** A schema the document lists by name under components.schemas. */
export interface Named {
  name: string;
  schema: z.ZodType;
  /** A request that works against a fresh effectd with the built-in tools (the docs page offers it; schemathesis starts from it). */
  example?: unknown;
}

/** An OpenAPI link: where an answer's values lead next (Swagger UI shows them; schemathesis follows them). */
export interface LinkDoc {
  operationId: string;
  /** Parameter → runtime expression, e.g. `$response.body#/effectId`. */
  parameters: Record<string, string>;
}

export interface ResponseDoc {
  description: string;
  links?: Record<string, LinkDoc>;
  /** JSON bodies by component; several mean any one of them. */
  json?: Named[];
  /** A body that is not JSON: media type → what it is. */
  other?: Record<string, string>;
}

/** One route as the OpenAPI document describes it; the controllers in src/api/ serve it. */
export interface RouteDoc {
  method: 'get' | 'post';
  /** OpenAPI form: `/v1/effects/{effectId}`. */
  path: string;
  operationId: string;
  tag: 'effects' | 'operator' | 'workflows' | 'sagas' | 'catalog' | 'session' | 'service' | 'docs' | 'mcp';
  summary: string;
  description?: string;
  /** A bearer credential is needed (401 without one). */
  auth: boolean;
  pathParams?: Record<string, { schema: z.ZodType; description: string; example?: string }>;
  query?: z.ZodObject;
  headers?: Record<string, { schema: z.ZodType; description: string }>;
  body?: Named & { required: boolean };
  responses: Record<number, ResponseDoc>;
  /** Error statuses beyond those every route can give (see errorStatuses in document.ts). */
  errors?: number[];
}

const named = (name: string, schema: z.ZodType, example?: unknown): Named => ({ name, schema, ...(example !== undefined ? { example } : {}) });
const EXAMPLE_WORKFLOW = 'wf-example-1';

const EffectOutcome = named('EffectOutcome', effectOutcomeSchema);
const EffectDetail = named('EffectDetail', effectDetailSchema);
const SagaView = named('SagaView', sagaViewSchema);
export const ErrorBody = named('Error', errorBodySchema);
const jsonRpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number().int()]).optional().meta({ description: 'Absent for a notification.' }),
  method: z.string().meta({ description: 'e.g. `initialize`, `tools/list`, `tools/call`.' }),
  params: z.record(z.string(), z.unknown()).optional(),
}).strict().meta({ description: 'A JSON-RPC 2.0 request or notification.' });
const JsonRpcResponse = named('JsonRpcResponse', z.looseObject({ jsonrpc: z.literal('2.0') }));

const tenantQuery = z.object({ tenant: tenantField.optional().meta({ description: 'Another tenant to act for (operators with `*` only); the caller\'s own when absent.' }) });
const workflowIdParam = { workflowId: { schema: workflowIdField, description: 'The workflow (one task: the thread id the harness keeps across resumes), as the harness named it.', example: EXAMPLE_WORKFLOW } };
const effectIdParam = { effectId: { schema: z.string(), description: 'The effect\'s id, as an outcome gave it.' } };

/** Where an effect's outcome leads: the effect, what an operator may do with it, and its workflow. */
const effectLinks: Record<string, LinkDoc> = {
  getEffect: { operationId: 'getEffect', parameters: { effectId: '$response.body#/effectId' } },
  resolveEffect: { operationId: 'resolveEffect', parameters: { effectId: '$response.body#/effectId' } },
  releaseEffect: { operationId: 'releaseEffect', parameters: { effectId: '$response.body#/effectId' } },
  getWorkflow: { operationId: 'getWorkflow', parameters: { workflowId: '$request.body#/workflowId' } },
  getHistory: { operationId: 'getHistory', parameters: { workflowId: '$request.body#/workflowId' } },
};

/** What the MCP transport answers before or instead of a JSON-RPC result, as a JSON-RPC error. */
const MCP_ERRORS: [number, string][] = [
  [400, 'Not a JSON-RPC message the server accepts.'],
  [401, 'Missing or unknown bearer token (with WWW-Authenticate).'],
  [403, 'Host or Origin not allowed (DNS-rebinding protection on a loopback bind).'],
  [404, 'No such session (stateless: none is kept).'],
  [405, 'Method not allowed.'],
  [406, 'The Accept header does not admit application/json and text/event-stream.'],
  [415, 'The body is not application/json.'],
];

/** Every route effectd serves over HTTP except the operator console (`/`, `/console/*`). */
export const ROUTES: readonly RouteDoc[] = [
  {
    method: 'post', path: '/v1/effects', operationId: 'submitEffect', tag: 'effects', auth: true,
    summary: 'Submit an effect command',
    description: 'Declares the effect (its identity is workflowId + step + slot) and runs it at most once: a resend with the same identity and intent answers the recorded outcome without calling the provider. `tool: "saga:<name>"` starts that saga with `args` as its input. A changed intent for a declared step is 422; a claim held by another attempt is 409 with the outcome so far.',
    headers: { Prefer: { schema: z.string(), description: 'RFC 7240 `wait=N` (seconds): how long the answer may wait for a lost reply to be settled before it says `unknown` (capped by the server; `Preference-Applied` says what was applied). Other preferences are ignored.' } },
    body: { ...named('EffectCommand', effectCommand, { workflowId: EXAMPLE_WORKFLOW, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-2291', amount: '49.00', currency: 'usd' } }), required: true },
    responses: {
      200: { description: 'The three-state outcome (done, not_done, unknown).', json: [EffectOutcome], links: effectLinks },
      409: { description: 'Another attempt holds a live claim on this effect (the outcome so far), or the stream moved on meanwhile (an error): send it again.', json: [EffectOutcome, ErrorBody] },
    },
    errors: [400, 403, 422],
  },
  {
    method: 'get', path: '/v1/effects', operationId: 'listEffects', tag: 'effects', auth: true,
    summary: 'List effects by state',
    description: 'Newest first. States of unsettled effects (and `attention`: escalated + terminal, the operator queue) are listed completely; other states come from the recent window.',
    query: effectListQuery,
    responses: { 200: { description: 'The matching effects.', json: [named('EffectList', effectListSchema)] } },
    errors: [400, 403],
  },
  {
    method: 'get', path: '/v1/effects/{effectId}', operationId: 'getEffect', tag: 'effects', auth: true,
    summary: 'One effect with its evidence',
    pathParams: effectIdParam,
    responses: { 200: { description: 'The effect, its outcome and every event about it.', json: [EffectDetail] } },
    errors: [403, 404],
  },
  {
    method: 'post', path: '/v1/effects/{effectId}/resolve', operationId: 'resolveEffect', tag: 'operator', auth: true,
    summary: 'Settle an escalated, terminal or unknown effect (operators)',
    description: 'An operator records what they found at the provider; the reason is kept in the ledger.',
    pathParams: effectIdParam,
    body: { ...named('Resolution', resolutionInput, { outcome: 'committed', receipt: 'ch_3Qx1', reason: 'found ch_3Qx1 for INV-2291 in the provider dashboard' }), required: true },
    responses: { 200: { description: 'The effect as settled.', json: [EffectDetail] } },
    errors: [400, 403, 404, 409],
  },
  {
    method: 'post', path: '/v1/effects/{effectId}/release', operationId: 'releaseEffect', tag: 'operator', auth: true,
    summary: 'Let a held effect go (operators)',
    description: 'The repeat the agent should have declared: the held effect is dispatched now.',
    pathParams: effectIdParam,
    body: { ...named('Release', releaseInput, { reason: 'the customer ordered the same item twice on purpose' }), required: false },
    responses: { 200: { description: 'The released effect\'s outcome.', json: [EffectOutcome] } },
    errors: [400, 403, 404, 409],
  },
  {
    method: 'post', path: '/v1/effects/{effectId}/duplicates/{receipt}', operationId: 'handleDuplicate', tag: 'operator', auth: true,
    summary: 'Deal with one extra object of a detected duplicate (operators)',
    description: '`compensate` runs the tool\'s declared undo for that receipt as an effect of its own; `keep` leaves it, on purpose.',
    pathParams: { ...effectIdParam, receipt: { schema: z.string(), description: 'The extra object\'s receipt (one of `duplicates.unhandled`).' } },
    body: { ...named('DuplicateHandling', duplicateHandlingInput, { action: 'keep', reason: 'the customer confirmed both orders' }), required: true },
    responses: { 200: { description: 'The effect with the duplicate dealt with.', json: [EffectDetail] } },
    errors: [400, 403, 404, 409],
  },
  {
    method: 'get', path: '/v1/workflows', operationId: 'listWorkflows', tag: 'workflows', auth: true,
    summary: 'Recent workflows, most recently active first',
    query: workflowListQuery,
    responses: { 200: { description: 'The workflows the caller may see.', json: [named('WorkflowList', workflowListSchema)] } },
    errors: [400, 403],
  },
  {
    method: 'get', path: '/v1/workflows/{workflowId}', operationId: 'getWorkflow', tag: 'workflows', auth: true,
    summary: 'A workflow\'s timeline',
    pathParams: workflowIdParam, query: tenantQuery,
    responses: { 200: { description: 'Every intent, attempt, check and outcome in order, and each effect\'s state.', json: [named('WorkflowTimeline', workflowTimelineSchema)] } },
    errors: [400, 403, 404],
  },
  {
    method: 'post', path: '/v1/workflows/{workflowId}/decisions', operationId: 'recordDecision', tag: 'workflows', auth: true,
    summary: 'Journal the model\'s decision for a step, before acting',
    description: 'A resumed task re-reads decided steps instead of asking the model again. Deciding a step again with other arguments is 422. The tenant: `?tenant=` as on the GETs, or the body\'s `tenant` (both: the same one, else 400).',
    pathParams: workflowIdParam, query: tenantQuery,
    body: { ...named('Decision', decisionInput, { step: 2, tool: 'payments.charge', args: { invoiceId: 'INV-2292', amount: 4900, currency: 'usd' }, decidedBy: 'model' }), required: true },
    responses: {
      201: { description: 'Recorded.', json: [named('DecisionResult', decisionResultSchema)], links: { listDecisions: { operationId: 'listDecisions', parameters: { workflowId: '$request.path.workflowId' } } } },
      200: { description: 'The step was decided already: the earlier decision.', json: [named('DecisionResult', decisionResultSchema)] },
    },
    errors: [400, 403, 409, 422],
  },
  {
    method: 'get', path: '/v1/workflows/{workflowId}/decisions', operationId: 'listDecisions', tag: 'workflows', auth: true,
    summary: 'The journaled decisions of a workflow',
    pathParams: workflowIdParam, query: tenantQuery,
    responses: { 200: { description: 'Decisions in the order they were recorded.', json: [named('DecisionList', decisionListSchema)] } },
    errors: [400, 403],
  },
  {
    method: 'get', path: '/v1/workflows/{workflowId}/history', operationId: 'getHistory', tag: 'workflows', auth: true,
    summary: 'What the model is told about earlier steps',
    description: 'Built from the ledger (facts, not the model\'s context window): each step with its effects\' three-state outcomes.',
    pathParams: workflowIdParam, query: tenantQuery,
    responses: { 200: { description: 'The steps in order.', json: [named('History', historySchema)] } },
    errors: [400, 403],
  },
  {
    method: 'get', path: '/v1/sagas', operationId: 'listSagas', tag: 'sagas', auth: true,
    summary: 'The sagas this effectd runs, and those set aside',
    responses: { 200: { description: 'Registered and unavailable sagas.', json: [named('SagaList', sagaListSchema)] } },
  },
  {
    method: 'post', path: '/v1/sagas', operationId: 'startSaga', tag: 'sagas', auth: true,
    summary: 'Start a saga (idempotent on its workflowId)',
    description: 'Runs it as far as it can go now. The same workflowId with the same input answers the saga as it stands; with other input it is 422.',
    body: { ...named('SagaStart', sagaStartInput, { saga: 'subscription-renewal', workflowId: 'wf-example-saga', input: { subscriptionId: 'sub_1', period: '2026-12', email: 'ada@example.com', amount: '9.00' } }), required: true },
    responses: { 201: { description: 'The saga as it stands.', json: [SagaView], links: { getSaga: { operationId: 'getSaga', parameters: { workflowId: '$response.body#/workflowId' } }, getWorkflow: { operationId: 'getWorkflow', parameters: { workflowId: '$response.body#/workflowId' } } } } },
    errors: [400, 403, 404, 409, 422],
  },
  {
    method: 'get', path: '/v1/sagas/definitions', operationId: 'sagaDefinitions', tag: 'catalog', auth: true,
    summary: 'Every saga: its steps, compensations and input schema',
    responses: { 200: { description: 'The saga catalog.', json: [named('SagaCatalog', sagaCatalogSchema)] } },
  },
  {
    method: 'get', path: '/v1/sagas/{workflowId}', operationId: 'getSaga', tag: 'sagas', auth: true,
    summary: 'A saga\'s steps, states and compensations',
    pathParams: workflowIdParam, query: tenantQuery,
    responses: { 200: { description: 'The saga as it stands.', json: [SagaView] } },
    errors: [400, 403, 404],
  },
  {
    method: 'get', path: '/v1/tools', operationId: 'listTools', tag: 'catalog', auth: true,
    summary: 'Every tool: its contract and the JSON Schema of its arguments',
    description: 'The contracts as configured. Providers are described without secrets: header and value names, never their values.',
    responses: { 200: { description: 'The tool catalog.', json: [named('ToolCatalog', toolCatalogSchema)] } },
  },
  {
    method: 'get', path: '/v1/meta', operationId: 'meta', tag: 'catalog', auth: true,
    summary: 'The effect lifecycle: every state, what it means and what it allows',
    description: 'One row per state (src/core/effect-lifecycle.ts): whether it is open or settled, whether a human is needed, whether an operator may resolve or release it, what the agent is told, what a saga does, and the events it accepts. Clients take their sets of states from here (the console does).',
    responses: { 200: { description: 'The lifecycle table.', json: [named('Meta', metaSchema)] } },
  },
  {
    method: 'get', path: '/v1/whoami', operationId: 'whoami', tag: 'session', auth: true,
    summary: 'Who the bearer token belongs to',
    responses: { 200: { description: 'The credential\'s name, role and tenant.', json: [named('Caller', whoamiSchema)] } },
  },
  {
    method: 'get', path: '/healthz', operationId: 'health', tag: 'service', auth: false,
    summary: 'Liveness',
    description: 'Liveness: 200 while the process answers; `status` is `degraded` while the ledger refuses writes (`ledgerWrites` says why).',
    responses: { 200: { description: 'The instance answers.', json: [named('Health', healthSchema)] } },
  },
  {
    method: 'get', path: '/readyz', operationId: 'ready', tag: 'service', auth: false,
    summary: 'Readiness: the ledger accepts writes',
    description: '200 while the ledger accepts writes (the last append\'s outcome or a write probe, at most once a second); 503 with `ledgerWrites.error` while it does not (a full disk, a read-only file or server, a file removed under the process).',
    responses: { 200: { description: 'Ready: commands can be recorded.', json: [named('Ready', readySchema)] } },
  },
  {
    method: 'get', path: '/metrics', operationId: 'metrics', tag: 'service', auth: false,
    summary: 'Prometheus metrics',
    responses: { 200: { description: 'The Prometheus text exposition format.', other: { 'text/plain': 'Prometheus text format 0.0.4' } } },
  },
  {
    method: 'get', path: '/openapi.json', operationId: 'openapi', tag: 'docs', auth: false,
    summary: 'This document (OpenAPI 3.1)',
    responses: { 200: { description: 'The OpenAPI document, generated at start from the schemas the handlers validate with.', json: [named('OpenApiDocument', z.looseObject({ openapi: z.string() }))] } },
  },
  {
    method: 'get', path: '/docs', operationId: 'docsPage', tag: 'docs', auth: false,
    summary: 'The API docs page (Swagger UI, served from the package)',
    responses: { 200: { description: 'The page.', other: { 'text/html': 'Swagger UI pointed at /openapi.json' } } },
  },
  {
    method: 'get', path: '/docs/{asset}', operationId: 'docsAsset', tag: 'docs', auth: false,
    summary: 'A script, style sheet or icon of the docs page',
    pathParams: { asset: { schema: z.enum(DOCS_ASSET_NAMES), description: 'The file.' } },
    responses: { 200: { description: 'The file.', other: { 'text/css': 'a style sheet', 'text/javascript': 'a script', 'image/png': 'an icon' } } },
    errors: [404],
  },
  {
    method: 'post', path: '/mcp', operationId: 'mcp', tag: 'mcp', auth: true,
    summary: 'MCP (Streamable HTTP, stateless)',
    description: 'JSON-RPC 2.0 for MCP clients: `initialize`, `tools/list`, `tools/call` (identity in `_meta`: `dev.effectd/workflowId`, `dev.effectd/step`). Send `Accept: application/json, text/event-stream`. A missing or unknown token is 401 before any message is read.',
    body: { ...named('JsonRpcRequest', jsonRpcRequest), required: true },
    responses: {
      200: { description: 'The JSON-RPC response.', json: [JsonRpcResponse], other: { 'text/event-stream': 'the JSON-RPC response as server-sent events' } },
      202: { description: 'A notification or response was accepted.' },
      ...Object.fromEntries(MCP_ERRORS.map(([status, description]) => [status, { description, json: [JsonRpcResponse] }])),
    },
  },
];
