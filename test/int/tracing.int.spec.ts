import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeUpstreams } from '../../src/providers/mcp-provider.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { ATTRIBUTE_NAMES } from '../../src/tracing/span-names.js';
import { installInMemoryTracing, type InMemoryTracing } from '../../src/tracing/in-memory-tracing.js';
import { startKafkaIngress, type KafkaIngress } from '../../src/transport/kafka/kafka-ingress.js';
import { kafkaIngressSettings } from '../../src/transport/kafka/kafka-settings.js';
import { getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';
import { createRunTopics, runId, testKafka, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers } from '../support/services.js';
import { startUpstreamPaymentsMcp, type UpstreamPaymentsMcp } from '../support/upstream-payments-mcp.js';
import { loadSettings } from '../../src/config/settings-loader.js';

/**
 * One trace runs agent → effectd → provider: effectd traced to an in-memory exporter in this
 * process, the real HTTP ingress, MCP over Streamable HTTP and the Kafka ingress in front, and the
 * payments simulator behind a real HTTP hop that records every header the provider received.
 */

interface ProviderRequest { method: string; path: string; headers: IncomingHttpHeaders }

/** A real HTTP hop in front of the provider that records what arrived; a dropped answer is dropped on to effectd. */
async function recordingHop(target: string): Promise<{ url: string; port: number; seen: ProviderRequest[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const seen: ProviderRequest[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method!, path: req.url!, headers: req.headers });
    const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, seen, close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }) };
}

/** The built-in tools against the test's providers, plus one tool of an upstream MCP server (effectd's MCP provider). */
function configWithUpstream(dataDir: string, providerUrls: Record<string, string>, upstreamUrl: string): string {
  // answerBudgetMs 0: a lost reply is answered unknown at once, so what settles it is the background's (reconciler, saga worker).
  const file = writeToolsConfig(dataDir, providerUrls, { 'payments.charge': { timeoutMs: 2_000, settleWindowMs: 10_000, answerBudgetMs: 0 } });
  const config = JSON.parse(readFileSync(file, 'utf8')) as { providers: Record<string, unknown>; tools: unknown[] };
  config.providers['pay-mcp'] = { mcp: { url: upstreamUrl } };
  config.tools.push({
    name: 'upstream.charge', provider: 'pay-mcp',
    mcp: { tool: 'create_charge', arguments: { amount: '{args.amount}', currency: '{args.currency}' }, referenceArgument: 'reference', receiptPath: 'structuredContent.id' },
    args: { invoiceId: { type: 'string', minLength: 1 }, amount: { type: 'money', currencyField: 'currency' }, currency: { type: 'currency', default: 'usd' } },
    target: 'invoice {args.invoiceId}', reversibility: 'compensable', idempotency: { kind: 'meta', retentionMs: 86_400_000 }, timeoutMs: 3_000, settleWindowMs: 10_000,
  });
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** A trace the test makes up, as an agent's instrumentation would: a trace id and the agent's span id. */
function agentTrace(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

function parseTraceparent(value: unknown): { traceId: string; parentId: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(value));
  if (!match) throw new Error(`not a traceparent: ${String(value)}`);
  return { traceId: match[1]!, parentId: match[2]! };
}

const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('OpenTelemetry traces: agent → effectd → provider', () => {
  let tracing: InMemoryTracing;
  let payments: RunningSimulator;
  let travel: RunningSimulator;
  let email: RunningSimulator;
  let hop: Awaited<ReturnType<typeof recordingHop>>;
  let upstream: UpstreamPaymentsMcp;
  let effectd: InProcessEffectd;
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const inTrace = (traceId: string) => tracing.spans().filter((s) => s.spanContext().traceId === traceId);
  const named = (spans: ReadableSpan[], name: string, effectId?: string) => spans.filter((s) => s.name === name && (effectId === undefined || s.attributes['effectd.effect_id'] === effectId));
  const charges = (path = '/v1/charges') => hop.seen.filter((r) => r.method === 'POST' && r.path === path);

  beforeAll(async () => {
    tracing = installInMemoryTracing();
    payments = await startSimulator('payments', { options: { searchLagMs: 0 } });
    travel = await startSimulator('travel');
    email = await startSimulator('email');
    hop = await recordingHop(payments.url);
    upstream = await startUpstreamPaymentsMcp({ paymentsUrl: payments.url });
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: configWithUpstream(dataDir, { payments: hop.url, travel: travel.url, email: email.url }, upstream.url) });
  });
  afterAll(async () => {
    await effectd?.close();
    await closeUpstreams();
    await Promise.all([hop?.close(), upstream?.close(), payments?.close(), travel?.close(), email?.close()]);
    await tracing?.uninstall();
  });

  it('the provider\'s request carries the agent\'s trace, its parent is the attempt span, and the spans nest command → declare + attempt', async () => {
    const agent = agentTrace();
    const command = { workflowId: `wf-trace-${run}-1`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-TRACE-${run}-1`, amount: 4900 } };
    const before = charges().length;
    const answer = await postJson(`${effectd.url}/v1/effects`, command, { ...effectd.agent, traceparent: agent.traceparent, tracestate: 'agent=1' });
    expect(answer.body).toMatchObject({ status: 'done' });

    const sent = charges().slice(before);
    expect(sent).toHaveLength(1);
    const onTheWire = parseTraceparent(sent[0]!.headers.traceparent);
    expect(onTheWire.traceId).toBe(agent.traceId);
    expect(sent[0]!.headers.tracestate).toBe('agent=1');

    const spans = inTrace(agent.traceId);
    const [commandSpan, ...others] = named(spans, 'effectd.command');
    expect(others).toHaveLength(0);
    expect(parentOf(commandSpan!)).toBe(agent.spanId);
    expect(commandSpan!.kind).toBe(SpanKind.SERVER);
    expect(commandSpan!.attributes).toMatchObject({
      'effectd.tool': 'payments.charge', 'effectd.workflow_id': command.workflowId, 'effectd.step': '1', 'effectd.effect_id': answer.body.effectId,
      'effectd.tenant': 'default', 'effectd.ingress': 'http', 'effectd.outcome': 'done', 'effectd.state': 'committed',
    });

    const [attempt, ...moreAttempts] = named(spans, 'effectd.attempt', answer.body.effectId);
    expect(moreAttempts).toHaveLength(0);
    expect(onTheWire.parentId).toBe(idOf(attempt!));
    expect(parentOf(attempt!)).toBe(idOf(commandSpan!));
    expect(attempt!.kind).toBe(SpanKind.CLIENT);
    expect(attempt!.attributes).toMatchObject({
      'effectd.attempt': 1, 'effectd.classification': 'committed', 'effectd.replayed': false,
      'http.request.method': 'POST', 'server.address': '127.0.0.1', 'server.port': hop.port, 'url.scheme': 'http', 'http.response.status_code': 200,
    });

    const declares = named(spans, 'effectd.declare', answer.body.effectId);
    expect(declares.map((s) => s.attributes['effectd.decision'])).toEqual(['dispatch']);
    expect(declares.every((s) => parentOf(s) === idOf(commandSpan!))).toBe(true);
    // Every effectd span of this command ended inside the command span.
    for (const span of [attempt!, ...declares]) expect(span.endTime[0] * 1e9 + span.endTime[1]).toBeLessThanOrEqual(commandSpan!.endTime[0] * 1e9 + commandSpan!.endTime[1]);

    // The declaration keeps the command's traceparent, so later checks can join this trace.
    const timeline = (await getJson(`${effectd.url}/v1/workflows/${command.workflowId}`, effectd.agent)).body.timeline as { type: string; event: { traceparent?: string } }[];
    const declared = timeline.find((t) => t.type === 'EffectDeclared')!;
    expect(parseTraceparent(declared.event.traceparent)).toEqual({ traceId: agent.traceId, parentId: idOf(commandSpan!) });
  });

  it('a lost reply: the reconciler\'s check, later and in the background, is in the agent\'s trace under the command span, and so is its lookup request', async () => {
    const agent = agentTrace();
    const command = { workflowId: `wf-trace-${run}-2`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-TRACE-${run}-2`, amount: 1200 } };
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    // Prefer: wait=0: the answer does not wait for the truth, so the background reconciler finds it.
    const answer = await postJson(`${effectd.url}/v1/effects`, command, { ...effectd.agent, traceparent: agent.traceparent, prefer: 'wait=0' });
    expect(answer.body).toMatchObject({ status: 'unknown' });
    const { effectId } = answer.body as { effectId: string };
    await waitFor('the reconciler to find the charge', async () => ((await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.agent)).body.state === 'committed' ? true : undefined), 10_000);
    const check = await waitFor('the check span', async () => named(inTrace(agent.traceId), 'effectd.reconcile.check', effectId).find((s) => s.attributes['effectd.check.verdict'] === 'committed'), 5_000);

    const spans = inTrace(agent.traceId);
    const [commandSpan] = named(spans, 'effectd.command');
    expect(commandSpan!.attributes).toMatchObject({ 'effectd.outcome': 'unknown', 'effectd.effect_id': effectId });
    const [attempt] = named(spans, 'effectd.attempt', effectId);
    expect(attempt!.attributes).toMatchObject({ 'effectd.classification': 'unknown', 'error.type': expect.any(String) });
    expect(attempt!.attributes).not.toHaveProperty('http.response.status_code');
    expect(parentOf(check)).toBe(idOf(commandSpan!));
    expect(check.attributes).toMatchObject({ 'effectd.check.mode': 'scheduled', 'effectd.check.kind': 'lookup-by-reference', 'effectd.check.verdict': 'committed', 'effectd.tool': 'payments.charge', 'http.response.status_code': 200 });
    // The check started after the command had answered: it is the background's, not the request's.
    expect(check.startTime[0] * 1e9 + check.startTime[1]).toBeGreaterThan(commandSpan!.endTime[0] * 1e9 + commandSpan!.endTime[1]);

    const lookups = hop.seen.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/charges/search') && r.headers.traceparent !== undefined && parseTraceparent(r.headers.traceparent).traceId === agent.traceId);
    expect(lookups.map((r) => parseTraceparent(r.headers.traceparent).parentId)).toContain(idOf(check));
  });

  it('a saga started with a traceparent: one command span, a saga.step span per step, each step\'s attempt under its step', async () => {
    const agent = agentTrace();
    const workflowId = `trip-trace-${run}`;
    const input = { tripId: `T-${run}`, traveller: { name: 'Ada', email: 'ada@example.com' }, flight: 'LH400', date: '2027-03-01', hotel: 'Hotel Adlon', nights: 2, amount: 89_000 };
    const view = await postJson(`${effectd.url}/v1/sagas`, { saga: 'trip-booking', workflowId, input }, { ...effectd.agent, traceparent: agent.traceparent });
    expect(view.body).toMatchObject({ status: 'completed' });
    const spans = inTrace(agent.traceId);
    const [commandSpan, ...others] = named(spans, 'effectd.command');
    expect(others).toHaveLength(0);
    expect(parentOf(commandSpan!)).toBe(agent.spanId);
    expect(commandSpan!.attributes).toMatchObject({ 'effectd.tool': 'saga:trip-booking', 'effectd.workflow_id': workflowId, 'effectd.state': 'completed' });
    const steps = named(spans, 'effectd.saga.step');
    expect(steps.map((s) => s.attributes['effectd.step'])).toEqual(['hold-flight', 'book-hotel', 'charge-card', 'email-itinerary']);
    for (const step of steps) {
      expect(parentOf(step)).toBe(idOf(commandSpan!));
      expect(step.attributes).toMatchObject({ 'effectd.saga': 'trip-booking', 'effectd.saga.phase': 'run', 'effectd.outcome': 'done' });
      const attempts = named(spans, 'effectd.attempt', String(step.attributes['effectd.effect_id']));
      expect(attempts).toHaveLength(1);
      expect(parentOf(attempts[0]!)).toBe(idOf(step));
    }
  });

  it('a saga paused on a lost reply and resumed in the background: the steps it takes then are in the starting command\'s trace, under its span', async () => {
    const agent = agentTrace();
    const workflowId = `trip-trace-${run}-resumed`;
    const input = { tripId: `T-${run}-R`, traveller: { name: 'Ada', email: 'ada@example.com' }, flight: 'LH402', date: '2027-03-02', hotel: 'Hotel Adlon', nights: 1, amount: 45_000 };
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const started = await postJson(`${effectd.url}/v1/sagas`, { saga: 'trip-booking', workflowId, input }, { ...effectd.agent, traceparent: agent.traceparent });
    expect(started.body).toMatchObject({ status: 'paused' });
    await waitFor('the saga to resume and complete', async () => ((await getJson(`${effectd.url}/v1/sagas/${workflowId}`, effectd.agent)).body.status === 'completed' ? true : undefined), 15_000, 100);
    const email = await waitFor('the resumed step\'s span', async () => named(inTrace(agent.traceId), 'effectd.saga.step').find((s) => s.attributes['effectd.step'] === 'email-itinerary'), 5_000);

    const [commandSpan] = named(inTrace(agent.traceId), 'effectd.command');
    expect(commandSpan!.attributes).toMatchObject({ 'effectd.tool': 'saga:trip-booking', 'effectd.workflow_id': workflowId });
    expect(parentOf(email)).toBe(idOf(commandSpan!));
    expect(email.attributes).toMatchObject({ 'effectd.saga.phase': 'run', 'effectd.outcome': 'done' });
    // Taken after the command had answered (paused): the saga worker's, not the request's.
    expect(email.startTime[0] * 1e9 + email.startTime[1]).toBeGreaterThan(commandSpan!.endTime[0] * 1e9 + commandSpan!.endTime[1]);
    const [attempt] = named(inTrace(agent.traceId), 'effectd.attempt', String(email.attributes['effectd.effect_id']));
    expect(parentOf(attempt!)).toBe(idOf(email));
  });

  it('MCP: the trace context in params._meta reaches the provider, under the attempt span', async () => {
    const agent = agentTrace();
    const client = new Client({ name: 'effectd-trace-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${effectd.url}/mcp`), { requestInit: { headers: effectd.agent } }));
    try {
      const before = charges().length;
      const workflowId = `wf-trace-${run}-mcp`;
      const result = await client.callTool({ name: 'payments_charge', arguments: { invoiceId: `INV-TRACE-${run}-MCP`, amount: 700 }, _meta: { 'dev.effectd/workflowId': workflowId, 'dev.effectd/step': '1', traceparent: agent.traceparent } });
      expect(result.structuredContent).toMatchObject({ status: 'done' });
      const spans = inTrace(agent.traceId);
      const [commandSpan] = named(spans, 'effectd.command');
      expect(parentOf(commandSpan!)).toBe(agent.spanId);
      expect(commandSpan!.attributes).toMatchObject({ 'effectd.ingress': 'mcp', 'effectd.workflow_id': workflowId });
      const [attempt] = named(spans, 'effectd.attempt');
      const sent = charges().slice(before);
      expect(sent).toHaveLength(1);
      expect(parseTraceparent(sent[0]!.headers.traceparent)).toEqual({ traceId: agent.traceId, parentId: idOf(attempt!) });
    } finally {
      await client.close();
    }
  });

  it('MCP: without a traceparent in _meta, the /mcp request\'s traceparent header is the parent; a _meta one wins over it', async () => {
    const fromHeader = agentTrace();
    const fromMeta = agentTrace();
    const client = new Client({ name: 'effectd-trace-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${effectd.url}/mcp`), { requestInit: { headers: { ...effectd.agent, traceparent: fromHeader.traceparent } } }));
    try {
      const workflowId = `wf-trace-${run}-mcp-header`;
      const call = (step: string, meta: Record<string, string> = {}) => client.callTool({ name: 'payments_charge', arguments: { invoiceId: `INV-TRACE-${run}-MCPH-${step}`, amount: 710 }, _meta: { 'dev.effectd/workflowId': workflowId, 'dev.effectd/step': step, ...meta } });
      expect((await call('1')).structuredContent).toMatchObject({ status: 'done' });
      const [viaHeader] = named(inTrace(fromHeader.traceId), 'effectd.command');
      expect(parentOf(viaHeader!)).toBe(fromHeader.spanId);
      expect(viaHeader!.attributes).toMatchObject({ 'effectd.ingress': 'mcp', 'effectd.step': '1' });
      expect((await call('2', { traceparent: fromMeta.traceparent })).structuredContent).toMatchObject({ status: 'done' });
      const [viaMeta] = named(inTrace(fromMeta.traceId), 'effectd.command');
      expect(parentOf(viaMeta!)).toBe(fromMeta.spanId);
      expect(named(inTrace(fromHeader.traceId), 'effectd.command').map((s) => s.attributes['effectd.step'])).not.toContain('2');
    } finally {
      await client.close();
    }
  });

  it('an upstream MCP server as the provider gets the attempt\'s traceparent in params._meta', async () => {
    const agent = agentTrace();
    const answer = await postJson(`${effectd.url}/v1/effects`, { workflowId: `wf-trace-${run}-up`, step: 1, tool: 'upstream.charge', args: { invoiceId: `INV-TRACE-${run}-UP`, amount: 990 } }, { ...effectd.agent, traceparent: agent.traceparent });
    expect(answer.body).toMatchObject({ status: 'done' });
    const [attempt] = named(inTrace(agent.traceId), 'effectd.attempt', answer.body.effectId);
    expect(attempt!.attributes).toMatchObject({ 'effectd.classification': 'committed' });
    const call = upstream.calls.at(-1)!;
    expect(parseTraceparent(call.meta?.traceparent)).toEqual({ traceId: agent.traceId, parentId: idOf(attempt!) });
  });

  describe('Kafka', () => {
    let topics: RunTopics;
    let ingress: KafkaIngress;
    beforeAll(async () => {
      const id = runId('trace');
      topics = await createRunTopics(id);
      ingress = await startKafkaIngress(effectd.runtime, { ...kafkaIngressSettings(kafkaBrokers().join(','), loadSettings({}).kafka, { groupId: `effectd-${id}` }), topics }, { log: () => {} });
    });
    afterAll(async () => {
      await ingress?.close();
      await topics?.drop();
    });

    it('the traceparent header of a command record (or, without one, the command\'s own trace field) reaches the provider', async () => {
      const viaHeader = agentTrace();
      const viaBody = agentTrace();
      const producer = testKafka().producer();
      await producer.connect();
      const before = charges().length;
      const command = (n: number, extra: Record<string, unknown> = {}) => JSON.stringify({ workflowId: `wf-trace-${run}-kafka-${n}`, step: '1', tool: 'payments.charge', args: { invoiceId: `INV-TRACE-${run}-K${n}`, amount: 300 + n }, ...extra });
      try {
        await producer.send({ topic: topics.commands, acks: -1, messages: [
          { key: `wf-trace-${run}-kafka-1`, value: command(1), headers: { ...effectd.agent, traceparent: viaHeader.traceparent } },
          { key: `wf-trace-${run}-kafka-2`, value: command(2, { trace: { traceparent: viaBody.traceparent } }), headers: { ...effectd.agent } },
        ] });
      } finally {
        await producer.disconnect();
      }
      for (const agent of [viaHeader, viaBody]) {
        const commandSpan = await waitFor('the Kafka command span', async () => named(inTrace(agent.traceId), 'effectd.command')[0], 20_000);
        expect(parentOf(commandSpan)).toBe(agent.spanId);
        expect(commandSpan.kind).toBe(SpanKind.CONSUMER);
        expect(commandSpan.attributes).toMatchObject({ 'effectd.ingress': 'kafka', 'effectd.outcome': 'done' });
        const [attempt] = named(inTrace(agent.traceId), 'effectd.attempt');
        const sent = charges().slice(before).filter((r) => parseTraceparent(r.headers.traceparent).traceId === agent.traceId);
        expect(sent).toHaveLength(1);
        expect(parseTraceparent(sent[0]!.headers.traceparent).parentId).toBe(idOf(attempt!));
      }
    });
  });

  it('no span says a token, a provider secret, a provider key or an argument value, and every attribute name is one of the fixed set', () => {
    const spans = tracing.spans();
    expect(spans.length).toBeGreaterThan(20);
    const exported = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, links: s.links, status: s.status, resource: s.resource.attributes })));
    const keys = hop.seen.map((r) => r.headers['idempotency-key']).filter((k): k is string => typeof k === 'string');
    expect(keys.length).toBeGreaterThan(3);
    const secrets = [effectd.agent.authorization!.slice('Bearer '.length), effectd.operator.authorization!.slice('Bearer '.length), 'sk_test_effectd', ...keys, `INV-TRACE-${run}`, 'ada@example.com', 'Hotel Adlon'];
    for (const secret of secrets) expect(exported, secret).not.toContain(secret);
    // Nor a path or query: the lookup's query names the effect's reference.
    expect(exported).not.toMatch(/\/v1\/charges|effectd_ref|search\?/);
    const names = new Set(spans.flatMap((s) => Object.keys(s.attributes)));
    expect([...names].filter((n) => !ATTRIBUTE_NAMES.has(n))).toEqual([]);
  });
});
