import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { effectCommand } from '../../src/core/effect-command.js';
import { resolutionInput } from '../../src/gateway/inputs.js';
import { errorStatuses, openApiDocument } from '../../src/api/openapi/document.js';
import { jsonSchemaOf } from '../../src/gateway/views/json-schema.js';
import { ROUTES } from '../../src/api/openapi/routes.js';

const doc = openApiDocument('1.2.3');
type Operation = { requestBody?: { content: Record<string, { schema: { $ref: string } }> }; responses: Record<string, unknown>; security: unknown[]; parameters?: { name: string; in: string; schema: Record<string, unknown> }[] };
const op = (method: string, path: string) => (doc.paths[path] as Record<string, Operation>)[method]!;
const component = (ref: { $ref: string }) => doc.components.schemas[ref.$ref.replace('#/components/schemas/', '')]!;

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 for the official schema validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('takes request bodies from the zod schemas the handlers validate with, not from a copy', () => {
    const submit = op('post', '/v1/effects');
    const body = component(submit.requestBody!.content['application/json']!.schema);
    const { description: _d, ...fromZod } = jsonSchemaOf(effectCommand, 'input');
    expect(body).toMatchObject(fromZod);
    expect(body.required).toEqual(['workflowId', 'step', 'tool', 'args']);
    expect((body.properties as Record<string, { type?: string; description?: string }>).args).toMatchObject({ type: 'object' });
    expect((body.properties as Record<string, { description?: string }>).workflowId!.description).toMatch(/harness/);
    const resolve = component(op('post', '/v1/effects/{effectId}/resolve').requestBody!.content['application/json']!.schema);
    expect(resolve).toEqual(jsonSchemaOf(resolutionInput, 'input'));
    expect(resolve.description).toMatch(/operator/i);
  });

  it('lists query parameters from the query schemas (the defaults and bounds included)', () => {
    const limit = op('get', '/v1/effects').parameters!.find((p) => p.name === 'limit')!;
    expect(limit).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } });
  });

  it('answers every error status a route can give with the error body, and secures /v1 with the bearer scheme', () => {
    for (const route of ROUTES) {
      const operation = op(route.method, route.path);
      for (const status of errorStatuses(route)) expect(operation.responses, `${route.method} ${route.path} ${status}`).toHaveProperty(String(status));
      expect(operation.security, route.path).toEqual(route.path.startsWith('/v1') || route.path === '/mcp' ? [{ bearer: [] }] : []);
    }
    expect(Object.keys(op('post', '/v1/effects').responses).sort()).toEqual(['200', '400', '401', '403', '409', '413', '415', '422', '503']);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.info.version).toBe('1.2.3');
  });
});
