import 'reflect-metadata';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { describe, expect, it } from 'vitest';
import { API_CONTROLLERS } from '../../src/api/http-server.js';
import { openApiDocument } from '../../src/api/openapi/document.js';
import { ROUTES } from '../../src/api/openapi/routes.js';

/** Routes served outside Nest (mounted on the HTTP server before it), which the document describes too. */
const OUTSIDE_NEST = ['POST /mcp'];

/** Every route of the Nest controllers, as `METHOD /path/{param}`, read from their decorators. */
function nestRoutes(): string[] {
  const routes: string[] = [];
  for (const controller of API_CONTROLLERS) {
    const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
    for (const key of Object.getOwnPropertyNames(controller.prototype)) {
      const handler = (controller.prototype as unknown as Record<string, unknown>)[key];
      if (typeof handler !== 'function' || key === 'constructor') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined) continue;
      const paths = [Reflect.getMetadata(PATH_METADATA, handler) ?? ''].flat() as string[];
      for (const path of paths) {
        const full = `/${[base, path].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/').replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        routes.push(`${RequestMethod[method]} ${full === '/' ? '/' : full.replace(/\/$/, '')}`);
      }
    }
  }
  return routes.sort();
}

function documentedRoutes(): string[] {
  const doc = openApiDocument('0.0.0-test');
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)).sort();
}

describe('the OpenAPI document and the routes effectd serves', () => {
  it('describes every Nest route, and nothing Nest does not serve except the routes mounted beside it', () => {
    const nest = nestRoutes();
    // A guard against reflecting nothing (a renamed metadata key would make both sides empty).
    expect(nest).toContain('POST /v1/effects');
    expect(nest).toContain('GET /v1/sagas/definitions');
    expect(nest.length).toBeGreaterThan(20);
    expect(documentedRoutes()).toEqual([...nest, ...OUTSIDE_NEST].sort());
  });

  it('declares each path parameter of a route exactly once, with the same names as the path', () => {
    for (const route of ROUTES) {
      const inPath = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      expect(Object.keys(route.pathParams ?? {}).sort(), `${route.method} ${route.path}`).toEqual(inPath);
    }
  });

  it('links only to operations that exist, by parameters they take', () => {
    const byId = new Map(ROUTES.map((r) => [r.operationId, r]));
    const links = ROUTES.flatMap((r) => Object.values(r.responses).flatMap((res) => Object.values(res.links ?? {})));
    expect(links.length).toBeGreaterThan(3);
    for (const link of links) {
      const target = byId.get(link.operationId);
      expect(target, link.operationId).toBeDefined();
      for (const name of Object.keys(link.parameters)) expect(Object.keys({ ...target!.pathParams, ...target!.query?.shape }), `${link.operationId}.${name}`).toContain(name);
    }
  });

  it('gives every operation its own operationId', () => {
    const ids = ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
