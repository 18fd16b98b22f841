// renderRequest stamps the reference into the request body without writing into the effect's args:
// the body shares the args' nested objects (a map arg sent as is, or filled in whole by a template).
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config-loader.js';
import { renderRequest } from '../../src/providers/provider-router.js';
import { ToolRegistry } from '../../src/providers/tool-registry.js';

function tool(request: Record<string, unknown>) {
  return new ToolRegistry(parseConfig({
    builtinTools: false,
    providers: { p: { baseUrl: 'http://127.0.0.1:9' } },
    tools: [{
      name: 'p.charge', provider: 'p', request, args: { amount: { type: 'integer' }, meta: { type: 'map' } }, target: 'x',
      reversibility: 'compensable', idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 1000 },
      reference: { kind: 'body-path', path: 'meta.effectd_ref' },
    }],
  }, 'test')).get('p.charge')!;
}

describe('renderRequest', () => {
  it('sends the args as the body with the reference stamped, and leaves the args as they were', () => {
    const charge = tool({ path: '/v1/charges' });
    const args = charge.schema.parse({ amount: 5, meta: { order: 'o-1' } });
    const before = JSON.stringify(args);
    const sent = renderRequest(charge, { args, providerKey: 'efd-k', reference: 'eff_1' });
    expect(JSON.parse(sent.body)).toEqual({ amount: 5, meta: { order: 'o-1', effectd_ref: 'eff_1' } });
    expect(JSON.stringify(args)).toBe(before);
  });

  it('stamps into an object a template filled in whole from the args, without writing into the args', () => {
    const charge = tool({ path: '/v1/charges', body: { total: '{args.amount}', meta: '{args.meta}' } });
    const args = charge.schema.parse({ amount: 5, meta: { order: 'o-1' } });
    const before = JSON.stringify(args);
    const sent = renderRequest(charge, { args, providerKey: 'efd-k', reference: 'eff_1' });
    expect(JSON.parse(sent.body)).toEqual({ total: 5, meta: { order: 'o-1', effectd_ref: 'eff_1' } });
    expect(JSON.stringify(args)).toBe(before);
  });

  it('creates the path when the body has no object there', () => {
    const charge = tool({ path: '/v1/charges', body: { total: '{args.amount}' } });
    const sent = renderRequest(charge, { args: charge.schema.parse({ amount: 5, meta: { order: 'o-1' } }), providerKey: 'efd-k', reference: 'eff_1' });
    expect(JSON.parse(sent.body)).toEqual({ total: 5, meta: { effectd_ref: 'eff_1' } });
  });
});
