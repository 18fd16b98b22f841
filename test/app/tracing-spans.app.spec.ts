import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DispatchResult } from '../../src/core/dispatch-result.js';
import { buildRequest, type DispatchInput } from '../../src/providers/http-provider.js';
import type { Tool } from '../../src/providers/tool-registry.js';
import type { EffectdApp } from '../../src/runtime/compose.js';
import { httpClientAttributes, httpResultAttributes } from '../../src/tracing/http-call-trace.js';
import { installInMemoryTracing, type InMemoryTracing } from '../../src/tracing/in-memory-tracing.js';
import { ATTRIBUTE_NAMES } from '../../src/tracing/span-names.js';
import { currentTraceparent, withTraceFrom } from '../../src/tracing/trace-context.js';
import { inSpan, SpanKind, tracingOn } from '../../src/tracing/tracer.js';
import { memoryApp } from '../support/memory-app.js';

/**
 * effectd's spans from the gateway down to the dispatcher, in this process: the application in
 * memory (test/support/memory-app.ts), a dispatcher that answers as the provider would (no network), and
 * an in-memory exporter. What the spans may say is a fixed set of names with no secrets in them.
 */

interface Sent { tool: Tool; input: DispatchInput; headers: Record<string, string> }

async function runtimeWith(answer: (sent: Sent) => DispatchResult): Promise<{ runtime: EffectdApp; sent: Sent[]; token: string }> {
  const sent: Sent[] = [];
  const memory = memoryApp({
    dispatcher: async (tool, input) => {
      // What the HTTP adapter would put on the wire, provider credentials included.
      const record = { tool, input, headers: buildRequest(tool, input).headers };
      sent.push(record);
      return answer(record);
    },
  });
  return { runtime: memory.app, sent, token: memory.tokens.agent };
}

const committed = (): DispatchResult => ({ kind: 'response', status: 200, headers: {}, body: { id: 'ch_unit_1' }, latencyMs: 3 });
const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('tracing off (no exporter configured)', () => {
  const open: EffectdApp[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.all(open.splice(0).map((r) => r.close()));
  });

  it('makes no span and never touches the OpenTelemetry API on the command path; the ledger is as it was', async () => {
    expect(tracingOn()).toBe(false);
    const active = vi.spyOn(context, 'active');
    const activeSpan = vi.spyOn(trace, 'getActiveSpan');
    const { runtime, token } = await runtimeWith(committed);
    open.push(runtime);
    const caller = runtime.gateway.authenticate(token, 'http');
    const submitted = await withTraceFrom({ traceparent }, () => runtime.gateway.submit(caller, { workflowId: 'wf-off', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-OFF', amount: 100 } }));
    expect(submitted.outcome.status).toBe('done');
    expect(active).not.toHaveBeenCalled();
    expect(activeSpan).not.toHaveBeenCalled();
    expect(currentTraceparent()).toBeUndefined();
    const declared = (await runtime.gateway.workflow(caller, 'wf-off')).timeline.find((t) => t.type === 'EffectDeclared')!.event;
    expect(declared).not.toHaveProperty('traceparent');
  });

  it('inSpan hands its work no span', async () => {
    await expect(inSpan('effectd.command', SpanKind.SERVER, async (span) => span)).resolves.toBeUndefined();
  });
});

describe('tracing on (in-memory exporter)', () => {
  let tracing: InMemoryTracing | undefined;
  const open: EffectdApp[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
    await tracing?.uninstall();
    tracing = undefined;
  });

  it('no attribute says the bearer token, the provider key, the provider\'s credentials or an argument value; every name is one of the fixed set', async () => {
    tracing = installInMemoryTracing();
    let n = 0;
    // A committed charge, a refused one, and a lost reply: every kind of attempt span.
    const { runtime, sent, token } = await runtimeWith(() => {
      n++;
      if (n === 2) return { kind: 'response', status: 402, headers: {}, body: { error: { message: 'card declined for INV-SECRET-2' } }, latencyMs: 2 };
      if (n === 3) return { kind: 'lost', error: 'ECONNRESET', latencyMs: 2 };
      return committed();
    });
    open.push(runtime);
    const caller = runtime.gateway.authenticate(token, 'http');
    for (let i = 1; i <= 3; i++) {
      await withTraceFrom({ traceparent }, () => runtime.gateway.submit(caller, { workflowId: 'wf-on', step: i, tool: 'payments.charge', args: { invoiceId: `INV-SECRET-${i}`, amount: 4242 + i, customer: 'cus_private_42', description: 'Private description' } }));
    }
    // A refused command is traced too, by its code only.
    await expect(runtime.gateway.submit(caller, { workflowId: 'wf-on', step: 9, tool: 'payments.charge', args: { invoiceId: 'INV-SECRET-9', amount: 'not money' } })).rejects.toThrow(/args do not fit/);

    const spans = tracing.spans();
    expect(spans.map((s) => s.name).sort()).toEqual(expect.arrayContaining(['effectd.attempt', 'effectd.command', 'effectd.declare']));
    const keys = sent.map((s) => s.input.providerKey!);
    expect(new Set(keys).size).toBe(3);
    const providerSecrets = sent.flatMap((s) => Object.values(s.headers)).filter((v) => v.length > 12);
    expect(providerSecrets.join(' ')).toContain('sk_test_effectd');
    const exported = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, links: s.links, status: s.status })));
    for (const secret of [token, ...keys, ...providerSecrets, 'INV-SECRET', 'cus_private_42', 'Private description', '4243', 'card declined', 'not money']) {
      expect(exported, secret).not.toContain(secret);
    }
    const names = new Set(spans.flatMap((s) => Object.keys(s.attributes)));
    expect([...names].filter((name) => !ATTRIBUTE_NAMES.has(name))).toEqual([]);

    const refused = spans.find((s) => s.name === 'effectd.command' && s.attributes['error.type'] !== undefined)!;
    expect(refused.attributes).toEqual({ 'effectd.ingress': 'http', 'error.type': 'invalid_command' });
    expect(refused.status.code).toBe(0); // the caller's mistake is not an error of effectd's
    const attempts = spans.filter((s) => s.name === 'effectd.attempt');
    expect(attempts.slice(0, 3).map((s) => s.attributes['effectd.classification'])).toEqual(['committed', 'failed_before_effect', 'unknown']);
    // Any later one is the lost reply's same-key resend (the answer's inline settle), attempt 2 of that effect.
    for (const resend of attempts.slice(3)) expect(resend.attributes).toMatchObject({ 'effectd.attempt': 2, 'effectd.effect_id': attempts[2]!.attributes['effectd.effect_id'] });
  });
});

describe('HTTP client attributes', () => {
  it('name the method, scheme, host and port, never the path, query, user or password', () => {
    const attributes = httpClientAttributes(new URL('https://acct:pa55@api.example:8443/v1/charges/search?query=metadata[effectd_ref]:abc'), 'get');
    expect(attributes).toEqual({ 'http.request.method': 'GET', 'url.scheme': 'https', 'server.address': 'api.example', 'server.port': 8443 });
    expect(httpClientAttributes(new URL('http://127.0.0.1/x'), 'POST')).toMatchObject({ 'server.port': 80 });
  });

  it('say a request without an answer by a bounded error.type, not its message', () => {
    expect(httpResultAttributes({ kind: 'response', status: 503, headers: {}, body: {}, latencyMs: 1 })).toEqual({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(httpResultAttributes({ kind: 'response', status: 201, headers: {}, body: {}, latencyMs: 1 })).toEqual({ 'http.response.status_code': 201 });
    expect(httpResultAttributes({ kind: 'lost', error: 'timeout after 5000 ms', latencyMs: 1 })).toEqual({ 'error.type': 'timeout' });
    expect(httpResultAttributes({ kind: 'not-sent', error: 'ECONNREFUSED', latencyMs: 1 })).toEqual({ 'error.type': 'ECONNREFUSED' });
    expect(httpResultAttributes({ kind: 'lost', error: 'socket hang up at /v1/x?k=secret', latencyMs: 1 })).toEqual({ 'error.type': 'lost' });
  });
});
