import { connect, type Socket } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer } from '../../src/api/http-server.js';
import { suiteEffectd, waitFor } from '../support/effectd-harness.js';

/**
 * What the HTTP ingress kept when it moved from Express to Fastify (issue 16) and no other test
 * pins: compressed bodies, the 1 MB limit after inflation, Express's lenient routing, /mcp in any
 * case, and a drain that answers 503 to a request arriving on a busy keep-alive connection.
 */
describe('the HTTP ingress on Fastify keeps what Express did', () => {
  const suite = suiteEffectd();
  let n = 0;
  const command = () => JSON.stringify({ workflowId: `wf-adapter-${++n}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-AD-${n}`, amount: 100 } });
  const post = async (body: BodyInit, headers: Record<string, string>) => {
    const res = await fetch(`${suite.effectd.url}/v1/effects`, { method: 'POST', headers: { 'content-type': 'application/json', ...suite.effectd.agent, ...headers }, body, duplex: 'half' } as RequestInit);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };


  it('gzip and deflate bodies are inflated; an unknown encoding is 415', async () => {
    expect((await post(gzipSync(command()), { 'content-encoding': 'gzip' })).body.status).toBe('done');
    expect((await post(deflateSync(command()), { 'content-encoding': 'deflate' })).body.status).toBe('done');
    const unknown = await post(command(), { 'content-encoding': 'compress' });
    expect(unknown.status).toBe(415);
    expect(unknown.body).toMatchObject({ error: 'unsupported_media_type', message: expect.stringMatching(/unsupported content encoding "compress"/) });
    const broken = await post(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toBe('bad_request');
  });

  it('a body over 1 MB is 413, declared, chunked or once inflated', async () => {
    const big = `{"pad":"${'x'.repeat(1024 * 1024)}"}`;
    for (const answer of [
      await post(big, {}),
      await post(new Blob([big]).stream(), {}),
      await post(gzipSync(big), { 'content-encoding': 'gzip' }),
    ]) {
      expect(answer.status).toBe(413);
      expect(answer.body).toEqual({ error: 'too_large', message: 'the request body is over 1 MB (EFFECTD_BODY_LIMIT_BYTES=1048576); nothing was recorded' });
    }
  });

  it('a byte order mark is read past, as Express read it', async () => {
    expect((await post(`\uFEFF${command()}`, {})).body.status).toBe('done');
  });

  it('routes match as Express matched them: a trailing slash, any case; parameters keep theirs', async () => {
    expect((await fetch(`${suite.effectd.url}/healthz/`)).status).toBe(200);
    expect((await fetch(`${suite.effectd.url}/HealthZ`)).status).toBe(200);
    const missing = await fetch(`${suite.effectd.url}/V1/Effects/eff_MixedCase`, { headers: suite.effectd.agent });
    expect(missing.status).toBe(404);
    expect(JSON.stringify(await missing.json())).toContain('eff_MixedCase');
    const head = await fetch(`${suite.effectd.url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
  });

  it('/mcp in any case is the MCP endpoint (POST only), before any JSON parsing', async () => {
    for (const path of ['/mcp', '/MCP', '/mcp/']) {
      const res = await fetch(`${suite.effectd.url}${path}`);
      expect(res.status, path).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
    const text = await fetch(`${suite.effectd.url}/mcp`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(text.status).toBe(401); // the MCP endpoint's own answer, not the JSON ingress's 415
  });

  it('a drain answers the request it received and 503 shutting_down to the next one on that connection', async () => {
    const server = await startHttpServer(suite.effectd.runtime, 0);
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(server.port, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
    let reply = '';
    socket.on('data', (d: Buffer) => (reply += d.toString()));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const body = command();
    socket.write(`POST /v1/effects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: ${suite.effectd.agent.authorization}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    await waitFor('the request to be in flight', async () => (server.inFlight() === 1 ? true : undefined));
    const closing = server.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write(`${body.slice(5)}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    await closed;
    await closing;
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
    expect(reply).toMatch(/"status":"done"/);
    expect(reply).toMatch(/HTTP\/1\.1 503[\s\S]*[Cc]onnection: close[\s\S]*"error":"shutting_down"/);
    expect(server.inFlight()).toBe(0);
  });
});
