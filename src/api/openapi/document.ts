import { jsonSchemaOf, type JsonSchema } from '../../gateway/views/json-schema.js';
import { ErrorBody, ROUTES, type Named, type ResponseDoc, type RouteDoc } from './routes.js';

/** What each error status means at effectd's HTTP ingress (src/api/error-filter.ts, http-server.ts). */
const ERROR_STATUS: Record<number, string> = {
  400: 'Invalid input: the body is not valid JSON, or a field is wrong (`fields` lists each by its path), or the tool is unknown.',
  401: 'No bearer token, or one that is unknown or revoked.',
  403: 'Not yours: a tenant the credential may not act for, or an operator action with an agent credential. (Another tenant\'s effect is 404, as one that does not exist.)',
  404: 'Not found (or another tenant\'s: the answer is the same, so it tells nothing about ids of other tenants).',
  409: 'Conflict: the effect is not in a state that allows this, or the stream moved on meanwhile; re-read and decide again.',
  413: 'The request body is over EFFECTD_BODY_LIMIT_BYTES (default 1 MB, the same for /mcp and Kafka commands); nothing was recorded.',
  415: 'The request body is not JSON in UTF-8 (send Content-Type: application/json).',
  422: 'Refused: the step was declared with other arguments (a changed intent); nothing was sent for this command. `recorded` says where the recorded effect stands: only when it did not happen (`not_done`) is a new step the way to do something else.',
  503: 'Try again later: effectd is shutting down, or a part it depends on (the ledger) is unavailable. Retry-After says when. Without `recorded`, nothing was recorded for the command; with it (and `effectId`), the effect was recorded before the failure (an attempt claimed, perhaps sent): do not take it for not_done, ask GET /v1/effects/{effectId}; the same command again is answered from the ledger.',
};

/** The error statuses a route can answer: its own, those of every request, and those of authentication and bodies. */
export function errorStatuses(route: RouteDoc): number[] {
  const statuses = new Set([503, ...(route.errors ?? [])]);
  if (route.auth) statuses.add(401);
  if (route.body) [400, 413, 415].forEach((s) => statuses.add(s));
  return [...statuses].sort((a, b) => a - b);
}

export interface OpenApiDocument {
  openapi: '3.1.1';
  info: Record<string, unknown>;
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown> };
}

const TAGS: Record<RouteDoc['tag'], string> = {
  effects: 'Effect commands and their outcomes: each declared effect happens at most once.',
  operator: 'What only operator credentials may do: settle, release, deal with duplicates.',
  workflows: 'Workflows (agent runs): timelines, the model\'s journaled decisions, the history it is told.',
  sagas: 'Sagas: steps run as effects, compensated in reverse order on a proven failure.',
  catalog: 'What this effectd is configured with: tools with their contracts, sagas with their steps.',
  session: 'The caller, as its credential says.',
  service: 'Health and metrics.',
  docs: 'This document and its docs page.',
  mcp: 'The MCP front door (Streamable HTTP).',
};

/**
 * The OpenAPI 3.1 document, built from the route table (routes.ts) and the zod schemas the
 * handlers validate with; request and response bodies are named components.
 */
export function openApiDocument(version: string): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = {};
  const ref = (named: Named, io: 'input' | 'output') => {
    schemas[named.name] ??= jsonSchemaOf(named.schema, io);
    return { $ref: `#/components/schemas/${named.name}` };
  };
  const paths: OpenApiDocument['paths'] = {};
  for (const route of ROUTES) {
    (paths[route.path] ??= {})[route.method] = operation(route, ref);
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'effectd',
      version,
      summary: 'Effect gateway and saga orchestrator for AI agents: every declared effect happens at most once.',
      description: 'Agents submit effect commands (`POST /v1/effects`); effectd records the intent before anything is sent, dispatches once with a provider key, and answers in three states: `done` with a receipt, `not_done` (safe to try again), or `unknown` (being checked: do not start another). Every /v1 call needs `Authorization: Bearer <token>`; the embedded default writes its credentials to `<data-dir>/credentials.json`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An effectd credential\'s token (agent or operator role, bound to a tenant).' },
      },
    },
  };
}

type Ref = (named: Named, io: 'input' | 'output') => { $ref: string };

function operation(route: RouteDoc, ref: Ref): Record<string, unknown> {
  const parameters = [
    ...Object.entries(route.pathParams ?? {}).map(([name, p]) => ({ name, in: 'path', required: true, description: p.description, schema: jsonSchemaOf(p.schema, 'input'), ...(p.example !== undefined ? { example: p.example } : {}) })),
    ...queryParameters(route),
    ...Object.entries(route.headers ?? {}).map(([name, h]) => ({ name, in: 'header', required: false, description: h.description, schema: jsonSchemaOf(h.schema, 'input') })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(route.responses)) responses[status] = response(doc, ref);
  for (const status of errorStatuses(route)) {
    responses[String(status)] ??= {
      description: ERROR_STATUS[status] ?? 'An error.',
      content: { 'application/json': { schema: ref(ErrorBody, 'output') } },
      ...(status === 503 ? { headers: { 'Retry-After': { description: 'Seconds to wait before sending the same request again.', schema: { type: 'integer', minimum: 1 } } } } : {}),
    };
  }
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: route.body.required, content: { 'application/json': { schema: ref(route.body, 'input'), ...(route.body.example !== undefined ? { example: route.body.example } : {}) } } } } : {}),
    responses,
    security: route.auth ? [{ bearer: [] }] : [],
  };
}

function queryParameters(route: RouteDoc) {
  if (!route.query) return [];
  const schema = jsonSchemaOf(route.query, 'input');
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([name, property]) => ({
    name, in: 'query', required: required.has(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    schema: property,
  }));
}

function response(doc: ResponseDoc, ref: Ref): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  if (doc.json && doc.json.length > 0) {
    const refs = doc.json.map((n) => ref(n, 'output'));
    content['application/json'] = { schema: refs.length === 1 ? refs[0] : { anyOf: refs } };
  }
  for (const [type, description] of Object.entries(doc.other ?? {})) content[type] = { schema: { type: 'string', description } };
  return { description: doc.description, ...(Object.keys(content).length > 0 ? { content } : {}), ...(doc.links ? { links: doc.links } : {}) };
}
