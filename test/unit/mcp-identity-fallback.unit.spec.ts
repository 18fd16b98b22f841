// The operator's fallback identity for MCP clients that cannot set _meta (src/mcp/identity.ts).
import { describe, expect, it } from 'vitest';
import { forwardedMeta } from '../../src/mcp/mcp-proxy.js';
import { identityFallbackOption, identityFrom, requireIdentity, slidWindow, threadFrom, withFallback } from '../../src/mcp/identity.js';
import { takeRepeat } from '../../src/mcp/repeat-argument.js';

const call = (patch: Partial<{ credential: string; tool: string; args: unknown; now: number }> = {}) => ({ credential: 'agent-a', tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 4900 }, now: Date.UTC(2026, 0, 1, 10, 30), ...patch });

describe('identityFallbackOption', () => {
  it('is off unless asked, header and content with their defaults, anything else refused', () => {
    expect(identityFallbackOption({})).toBeUndefined();
    expect(identityFallbackOption({ mode: 'off' })).toBeUndefined();
    expect(identityFallbackOption({ mode: 'header' })).toEqual({ mode: 'header', workflowHeader: 'x-effectd-workflow-id', stepHeader: 'x-effectd-step' });
    expect(identityFallbackOption({ mode: 'header', stepHeader: 'X-Plan-Step' })).toMatchObject({ stepHeader: 'x-plan-step' });
    expect(identityFallbackOption({ mode: 'content' })).toEqual({ mode: 'content', windowMs: 3_600_000 });
    expect(identityFallbackOption({ mode: 'content', windowMs: '600000' })).toEqual({ mode: 'content', windowMs: 600_000 });
    expect(() => identityFallbackOption({ mode: 'model' })).toThrow(/content \(the default\), header or off/);
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
    expect(() => requireIdentity({}, 'payments.charge', true)).toThrow(/started with --mcp-identity-fallback off; the operator can use content .*false dedup.*or header/);
    expect(() => requireIdentity({}, 'payments.charge', true, undefined, 'compensable')).toThrow(/^payments\.charge changes the world, so effectd needs/);
    expect(() => requireIdentity({}, 'payments.charge', true, { mode: 'header', workflowHeader: 'x-wf', stepHeader: 'x-step' })).toThrow(/HTTP headers x-wf and x-step/);
  });
});

describe('a read contract refused without identity', () => {
  it('is not told it changes the world', () => {
    let message = '';
    try {
      requireIdentity({}, 'crm.get-ticket', true, undefined, 'read');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^crm\.get-ticket is a read \(it changes nothing\), but effectd records each call of it as an effect/);
    expect(message).not.toContain('changes the world');
  });
});

describe('content identity: the repeat argument and the sliding window', () => {
  const content = { mode: 'content', windowMs: 3_600_000 } as const;
  const call = (over: Partial<{ credential: string; tool: string; args: unknown; now: number; repeat: string }> = {}) => ({ credential: 'agent-a', tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 4900 }, now: Date.UTC(2026, 0, 1, 10, 30), ...over });

  it('takeRepeat takes effectd_repeat out of the arguments, and refuses a malformed one', () => {
    expect(takeRepeat({ invoiceId: 'INV-1', effectd_repeat: ' second charge ' })).toEqual({ args: { invoiceId: 'INV-1' }, repeat: 'second charge' });
    expect(takeRepeat({ invoiceId: 'INV-1' })).toEqual({ args: { invoiceId: 'INV-1' } });
    expect(() => takeRepeat({ invoiceId: 'INV-1', effectd_repeat: '' })).toThrow(/args\.effectd_repeat is the reason/);
    expect(() => takeRepeat({ invoiceId: 'INV-1', effectd_repeat: 3 })).toThrow(/args\.effectd_repeat/);
  });

  it('a declared repeat is another step, declared as a repeat; the same repeat again is that step', () => {
    const first = withFallback(undefined, content, {}, call());
    const repeat = withFallback(undefined, content, {}, call({ repeat: 'second charge' }));
    expect(repeat.meta['dev.effectd/workflowId']).toBe(first.meta['dev.effectd/workflowId']);
    expect(repeat.meta['dev.effectd/step']).not.toBe(first.meta['dev.effectd/step']);
    expect(repeat.meta['dev.effectd/repeat']).toBe('second charge');
    expect(withFallback(undefined, content, {}, call({ repeat: 'second charge', now: Date.UTC(2026, 0, 1, 10, 31) })).meta).toEqual(repeat.meta);
    expect(withFallback(undefined, content, {}, call({ repeat: 'third charge' })).meta['dev.effectd/step']).not.toBe(repeat.meta['dev.effectd/step']);
  });

  it('scoped to the client\'s thread where it sends one (Codex: _meta.threadId): identical calls in two threads are two effects, in one thread one', () => {
    const a = withFallback(undefined, content, {}, { ...call(), thread: 'thread-a' });
    expect(withFallback(undefined, content, {}, { ...call({ now: Date.UTC(2026, 0, 1, 10, 45) }), thread: 'thread-a' }).meta).toEqual(a.meta);
    expect(withFallback(undefined, content, {}, { ...call(), thread: 'thread-b' }).meta['dev.effectd/workflowId']).not.toBe(a.meta['dev.effectd/workflowId']);
    expect(withFallback(undefined, content, {}, call()).meta['dev.effectd/workflowId']).not.toBe(a.meta['dev.effectd/workflowId']);
    expect(threadFrom({ threadId: '019bbb20-bff6-7130-83aa-bf45ab33250e', progressToken: 0 })).toBe('019bbb20-bff6-7130-83aa-bf45ab33250e');
    expect(threadFrom({ threadId: 7 })).toBeUndefined();
    expect(threadFrom(undefined)).toBeUndefined();
  });

  it('slides: an identical call declared in the previous window is that effect; other content, or a workflow named in _meta, is not moved', async () => {
    const before = withFallback(undefined, content, {}, call({ now: Date.UTC(2026, 0, 1, 10, 59, 50) }));
    const declared = new Set([`${String(before.meta['dev.effectd/workflowId'])}|${String(before.meta['dev.effectd/step'])}`]);
    const lookup = async (workflowId: string, step: string) => declared.has(`${workflowId}|${step}`);
    const at = (now: number, args?: unknown) => call({ now, ...(args !== undefined ? { args } : {}) });
    const justAfter = Date.UTC(2026, 0, 1, 11, 0, 5);
    const reissued = await slidWindow(withFallback(undefined, content, {}, at(justAfter)), content, at(justAfter), lookup);
    expect(reissued.meta).toEqual(before.meta);
    // Not slid: the plain derivation would have put it in the new window.
    expect(withFallback(undefined, content, {}, at(justAfter)).meta['dev.effectd/workflowId']).not.toBe(before.meta['dev.effectd/workflowId']);
    const other = await slidWindow(withFallback(undefined, content, {}, at(justAfter, { invoiceId: 'INV-2', amount: 4900 })), content, at(justAfter, { invoiceId: 'INV-2', amount: 4900 }), lookup);
    expect(other.meta['dev.effectd/workflowId']).not.toBe(before.meta['dev.effectd/workflowId']);
    // Two windows on, the previous window holds nothing: a new effect.
    const twoLater = Date.UTC(2026, 0, 1, 12, 0, 5);
    expect((await slidWindow(withFallback(undefined, content, {}, at(twoLater)), content, at(twoLater), lookup)).meta['dev.effectd/workflowId']).not.toBe(before.meta['dev.effectd/workflowId']);
    const named = await slidWindow(withFallback({ 'dev.effectd/workflowId': 'wf-own' }, content, {}, at(justAfter)), content, at(justAfter), lookup);
    expect(named.meta['dev.effectd/workflowId']).toBe('wf-own');
    const off = withFallback(undefined, undefined, {}, at(justAfter));
    expect(await slidWindow(off, undefined, at(justAfter), lookup)).toBe(off);
  });
});

describe('forwardedMeta (effectd mcp --url)', () => {
  it('passes every key but the protocol\'s per-hop ones', () => {
    expect(forwardedMeta({ 'dev.effectd/workflowId': 'wf', 'dev.effectd/step': 1, traceparent: 't', progressToken: 3, 'io.modelcontextprotocol/protocolVersion': '2026-07-28' })).toEqual({ 'dev.effectd/workflowId': 'wf', 'dev.effectd/step': 1, traceparent: 't' });
    expect(forwardedMeta({ progressToken: 1 })).toBeUndefined();
    expect(forwardedMeta(undefined)).toBeUndefined();
  });
});
