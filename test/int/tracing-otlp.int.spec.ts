import { randomBytes } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, ensureBuilt, postJson, spawnEffectd, tempDir, writeToolsConfig, type EffectdProcess } from '../support/effectd-harness.js';

/**
 * `effectd start` as its own process, exporting over OTLP/HTTP (the real exporter, JSON) to a
 * receiver this test runs: spans leave the process only when it drains (the batch delay is set
 * far beyond the test), they name service effectd, and they tie the agent's trace to the provider's request.
 */

interface OtlpAttribute { key: string; value: { stringValue?: string; intValue?: string | number; boolValue?: boolean } }
interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[] }
interface OtlpExport { resourceSpans: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] }

async function listen(server: Server): Promise<string> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server) => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); });

const value = (attributes: OtlpAttribute[] | undefined, key: string) => {
  const found = attributes?.find((a) => a.key === key)?.value;
  return found?.stringValue ?? (found?.intValue !== undefined ? Number(found.intValue) : found?.boolValue);
};

describe('traces exported over OTLP/HTTP by an effectd process', () => {
  const received: { path: string; contentType?: string; body: OtlpExport }[] = [];
  const providerSaw: { path: string; headers: IncomingHttpHeaders }[] = [];
  let receiver: Server;
  let hop: Server;
  let payments: RunningSimulator;
  let effectd: EffectdProcess;
  let dataDir: string;

  beforeAll(async () => {
    await ensureBuilt();
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url!, ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    const receiverUrl = await listen(receiver);
    payments = await startSimulator('payments');
    const upstream = new URL(payments.url);
    hop = createServer((req, res) => {
      providerSaw.push({ path: req.url!, headers: req.headers });
      const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    const hopUrl = await listen(hop);
    dataDir = tempDir();
    effectd = await spawnEffectd(['--data-dir', dataDir, '--config', writeToolsConfig(dataDir, { payments: hopUrl })], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_SERVICE_NAME: '', OTEL_TRACES_EXPORTER: '',
    });
  });
  afterAll(async () => {
    await effectd?.kill();
    await Promise.all([receiver && close(receiver), hop && close(hop), payments?.close()]);
  });

  it('exports the command, declare and attempt spans of the agent\'s trace at drain, and the provider saw the attempt as parent', async () => {
    const traceId = randomBytes(16).toString('hex');
    const agentSpan = randomBytes(8).toString('hex');
    const answer = await postJson(`${effectd.url}/v1/effects`, { workflowId: `wf-otlp-${process.pid}`, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-OTLP-1', amount: 2500 } }, { ...authHeaders(dataDir, 'agent'), traceparent: `00-${traceId}-${agentSpan}-01` });
    expect(answer.body).toMatchObject({ status: 'done' });
    expect(received).toHaveLength(0); // batched: nothing leaves before the drain

    const exited = new Promise<number | null>((ok) => effectd.child.once('exit', (code) => ok(code)));
    effectd.child.kill('SIGTERM');
    expect(await exited).toBe(0);

    expect(received.length).toBeGreaterThan(0);
    expect(received.every((r) => r.path === '/v1/traces' && r.contentType === 'application/json')).toBe(true);
    const resources = received.flatMap((r) => r.body.resourceSpans);
    expect(resources.every((r) => value(r.resource?.attributes, 'service.name') === 'effectd')).toBe(true);
    const spans = resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)).filter((s) => s.traceId === traceId);
    const command = spans.find((s) => s.name === 'effectd.command')!;
    expect(command.parentSpanId).toBe(agentSpan);
    expect(value(command.attributes, 'effectd.outcome')).toBe('done');
    expect(value(command.attributes, 'effectd.effect_id')).toBe(answer.body.effectId);
    const attempt = spans.find((s) => s.name === 'effectd.attempt')!;
    expect(attempt.parentSpanId).toBe(command.spanId);
    expect(value(attempt.attributes, 'http.response.status_code')).toBe(200);
    expect(spans.filter((s) => s.name === 'effectd.declare').every((s) => s.parentSpanId === command.spanId)).toBe(true);

    const charge = providerSaw.find((r) => r.path === '/v1/charges')!;
    expect(charge.headers.traceparent).toBe(`00-${traceId}-${attempt.spanId}-01`);
  });
});
