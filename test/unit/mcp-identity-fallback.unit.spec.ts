// The operator's fallback identity for MCP clients that cannot set _meta (src/mcp/identity.ts).
import { describe, expect, it } from 'vitest';
import { forwardedMeta } from '../../src/mcp/mcp-proxy.js';
import { identityFallbackOption, identityFrom, requireIdentity, withFallback } from '../../src/mcp/identity.js';

const call = (patch: Partial<{ credential: string; tool: string; args: unknown; now: number }> = {}) => ({ credential: 'agent-a', tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 4900 }, now: Date.UTC(2026, 0, 1, 10, 30), ...patch });

describe('identityFallbackOption', () => {
  it('is off unless asked, header and content with their defaults, anything else refused', () => {
    expect(identityFallbackOption({})).toBeUndefined();
    expect(identityFallbackOption({ mode: 'off' })).toBeUndefined();
    expect(identityFallbackOption({ mode: 'header' })).toEqual({ mode: 'header', workflowHeader: 'x-effectd-workflow-id', stepHeader: 'x-effectd-step' });
    expect(identityFallbackOption({ mode: 'header', stepHeader: 'X-Plan-Step' })).toMatchObject({ stepHeader: 'x-plan-step' });
    expect(identityFallbackOption({ mode: 'content' })).toEqual({ mode: 'content', windowMs: 3_600_000 });
    expect(identityFallbackOption({ mode: 'content', windowMs: '600000' })).toEqual({ mode: 'content', windowMs: 600_000 });
    expect(() => identityFallbackOption({ mode: 'model' })).toThrow(/header or content/);
    expect(() => identityFallbackOption({ mode: 'content', windowMs: '5' })).toThrow(/≥ 1000/);
    expect(() => identityFallbackOption({ mode: 'header', workflowHeader: 'bad header' })).toThrow(/not an HTTP header name/);
  });
});

describe('withFallback', () => {
  const header = { mode: 'header', workflowHeader: 'x-effectd-workflow-id', stepHeader: 'x-effectd-step' } as const;
  const content = { mode: 'content', windowMs: 3_600_000 } as const;

  it('off, or _meta complete: _meta as is', () => {
    expect(withFallback(undefined, undefined, { headers: { workflowId: 'w', step: '1' } }, call())).toEqual({ meta: {}, source: 'meta' });
    const meta = { 'dev.effectd/workflowId': 'wf', 'dev.effectd/step': 2 };
    expect(withFallback(meta, content, {}, call())).toEqual({ meta, source: 'meta' });
  });

  it('header: fills what _meta lacks; _meta wins field by field', () => {
    expect(withFallback(undefined, header, { headers: { workflowId: 'wf-h', step: '3' } }, call())).toEqual({ meta: { 'dev.effectd/workflowId': 'wf-h', 'dev.effectd/step': '3' }, source: 'header' });
    expect(withFallback({ 'dev.effectd/step': 7 }, header, { headers: { workflowId: 'wf-h', step: '3' } }, call()).meta).toEqual({ 'dev.effectd/workflowId': 'wf-h', 'dev.effectd/step': 7 });
    expect(withFallback(undefined, header, { headers: {} }, call())).toEqual({ meta: {}, source: 'meta' });
  });

  it('content: the same call in the window is the same identity; other content, credential or window is another', () => {
    const a = withFallback(undefined, content, {}, call());
    expect(a.source).toBe('content');
    expect(identityFrom(a.meta)).toMatchObject({ workflowId: 'mcp-content-agent-a-2026-01-01T10:00:00.000Z', step: expect.stringMatching(/^content-[0-9a-f]{24}$/) });
    // Key order does not matter (canonical JSON); a later moment in the same window is the same effect.
    expect(withFallback(undefined, content, {}, call({ args: { amount: 4900, invoiceId: 'INV-1' }, now: Date.UTC(2026, 0, 1, 10, 59) })).meta).toEqual(a.meta);
    expect(withFallback(undefined, content, {}, call({ args: { invoiceId: 'INV-2', amount: 4900 } })).meta['dev.effectd/step']).not.toBe(a.meta['dev.effectd/step']);
    expect(withFallback(undefined, content, {}, call({ credential: 'agent-b' })).meta['dev.effectd/workflowId']).not.toBe(a.meta['dev.effectd/workflowId']);
    expect(withFallback(undefined, content, {}, call({ now: Date.UTC(2026, 0, 1, 11, 0) })).meta['dev.effectd/workflowId']).not.toBe(a.meta['dev.effectd/workflowId']);
    // A saga is one per workflow: its content names its own workflow.
    const saga = withFallback(undefined, content, {}, call({ tool: 'saga:trip-booking' }));
    expect(saga.meta['dev.effectd/workflowId']).toMatch(/^mcp-content-agent-a-2026-01-01T10:00:00.000Z-[0-9a-f]{24}$/);
  });
});

describe('requireIdentity refusals name the fallback', () => {
  it('off: both options and the content risk; header on: the headers this effectd reads', () => {
    expect(() => requireIdentity({}, 'payments.charge', true)).toThrow(/--mcp-identity-fallback header .*--mcp-identity-fallback content .*false dedup/);
    expect(() => requireIdentity({}, 'payments.charge', true, { mode: 'header', workflowHeader: 'x-wf', stepHeader: 'x-step' })).toThrow(/HTTP headers x-wf and x-step/);
  });
});

describe('forwardedMeta (effectd mcp --url)', () => {
  it('passes every key but the protocol\'s per-hop ones', () => {
    expect(forwardedMeta({ 'dev.effectd/workflowId': 'wf', 'dev.effectd/step': 1, traceparent: 't', progressToken: 3, 'io.modelcontextprotocol/protocolVersion': '2026-07-28' })).toEqual({ 'dev.effectd/workflowId': 'wf', 'dev.effectd/step': 1, traceparent: 't' });
    expect(forwardedMeta({ progressToken: 1 })).toBeUndefined();
    expect(forwardedMeta(undefined)).toBeUndefined();
  });
});
