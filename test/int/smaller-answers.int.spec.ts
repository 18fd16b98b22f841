import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchResult } from '../../src/core/dispatch-result.js';
import { loadCredentials, weakTokenProblem } from '../../src/runtime/credentials.js';
import { packageRoot } from '../../src/shared/package-root.js';
import { getJson, postJson, startEffectd, tempDir, type InProcessEffectd } from '../support/effectd-harness.js';

/** Issue 27, finding 8: the smaller items, each with its test. */

/** One raw HTTP/1.1 request (for what fetch will not send: two Authorization headers, a malformed URL, invalid UTF-8). */
function raw(url: string, head: string, body: Buffer = Buffer.alloc(0)): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`${head}\r\nHost: ${hostname}:${port}\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`);
      socket.end(body);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headers = '', ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(headers)?.[1]), headers, body: rest.join('\r\n\r\n') });
    });
  });
}

/** The JSON of a response body that may be sent chunked. */
function jsonOf(body: string): any {
  const start = body.indexOf('{');
  return JSON.parse(body.slice(start, body.lastIndexOf('}') + 1));
}

describe('the smaller items of issue 27 (finding 8)', () => {
  let effectd: InProcessEffectd;
  const dataDir = tempDir();
  const token = { agent: `efd_agent_${randomBytes(24).toString('base64url')}`, acme: `efd_acme_${randomBytes(24).toString('base64url')}`, operator: `efd_operator_${randomBytes(24).toString('base64url')}` };
  const as = (t: string) => ({ authorization: `Bearer ${t}` });
  const charge = (workflowId: string, amount: unknown = 4900, extra: Record<string, unknown> = {}) => ({ workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${workflowId}`, amount }, ...extra });
  const ledgered = async () => (await effectd.runtime.ledger.readAll(0, 1_000_000)).length;

  beforeAll(async () => {
    writeFileSync(join(dataDir, 'credentials.json'), JSON.stringify({ credentials: [
      { token: token.agent, role: 'agent', tenant: 'default', name: 'agent-default' },
      { token: token.acme, role: 'agent', tenant: 'acme', name: 'agent-acme' },
      { token: token.operator, role: 'operator', tenant: '*', name: 'ops' },
    ] }), { mode: 0o600 });
    effectd = await startEffectd({
      dataDir,
      dispatcher: async (): Promise<DispatchResult> => ({ kind: 'response', status: 200, headers: { 'content-type': 'application/json' }, body: { id: `ch_${randomBytes(4).toString('hex')}`, object: 'charge', status: 'succeeded' }, latencyMs: 1 }),
    });
  });
  afterAll(async () => {
    await effectd?.close();
  });

  it('POST …/decisions?tenant= is honoured as GET honours it (it was ignored); a body naming another tenant is a 400', async () => {
    const decision = { step: 'charge', tool: 'payments.charge', args: { invoiceId: 'INV-D', amount: 4900 }, decidedBy: 'model-x' };
    const posted = await postJson(`${effectd.url}/v1/workflows/wf-dec/decisions?tenant=acme`, decision, as(token.operator));
    expect(posted.status).toBe(201);
    const inAcme = await getJson(`${effectd.url}/v1/workflows/wf-dec/decisions?tenant=acme`, as(token.operator));
    expect(inAcme.body.decisions.map((d: { step: string }) => d.step)).toEqual(['charge']);
    const inDefault = await getJson(`${effectd.url}/v1/workflows/wf-dec/decisions`, as(token.operator));
    expect(inDefault.status === 404 || inDefault.body.decisions.length === 0).toBe(true);
    // An agent may not name another tenant, on POST as on GET.
    expect((await postJson(`${effectd.url}/v1/workflows/wf-dec/decisions?tenant=acme`, decision, as(token.agent))).status).toBe(403);
    expect((await getJson(`${effectd.url}/v1/workflows/wf-dec/decisions?tenant=acme`, as(token.agent))).status).toBe(403);
    const mismatch = await postJson(`${effectd.url}/v1/workflows/wf-dec2/decisions?tenant=acme`, { ...decision, tenant: 'default' }, as(token.operator));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.fields[0].path).toBe('tenant');
  });

  it('decidedBy is shown as a claim: claimedBy beside it (the wire field stays), "as claimed" in the timeline, recordedBy is the fact', async () => {
    const decision = { step: 'charge', tool: 'payments.charge', args: { invoiceId: 'INV-C', amount: 4900 }, decidedBy: 'gpt-imaginary' };
    const posted = await postJson(`${effectd.url}/v1/workflows/wf-claim/decisions`, decision, as(token.agent));
    expect(posted.body.decision).toMatchObject({ decidedBy: 'gpt-imaginary', claimedBy: 'gpt-imaginary', recordedBy: 'agent-default' });
    const timeline = await getJson(`${effectd.url}/v1/workflows/wf-claim`, as(token.agent));
    expect(timeline.body.timeline[0].summary).toMatch(/decided by gpt-imaginary, as claimed by the caller\), journaled by agent-default/);
  });

  it('a forged but well-formed list cursor is a 400 naming cursor; the one effectd gave out pages on', async () => {
    for (const id of ['wf-page-1', 'wf-page-2', 'wf-page-3']) expect((await postJson(`${effectd.url}/v1/effects`, charge(id), as(token.agent))).status).toBe(200);
    const first = await getJson(`${effectd.url}/v1/effects?state=committed&limit=1`, as(token.agent));
    const cursor: string = first.body.nextCursor;
    expect(cursor).toMatch(/^c2\./);
    expect((await getJson(`${effectd.url}/v1/effects?state=committed&limit=1&cursor=${encodeURIComponent(cursor)}`, as(token.agent))).status).toBe(200);
    const payload = Buffer.from(JSON.stringify([Date.now() + 86_400_000, 'eff_0000000000000000000000000000000000000000'])).toString('base64url');
    const forged = [`c2.${payload}.${randomBytes(16).toString('base64url').slice(0, 22)}`, `c1.${payload}`, `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`];
    for (const bad of forged) {
      const answer = await getJson(`${effectd.url}/v1/effects?state=committed&limit=1&cursor=${encodeURIComponent(bad)}`, as(token.agent));
      expect(answer.status, bad).toBe(400);
      expect(answer.body.fields.map((f: { path: string }) => f.path), bad).toContain('cursor');
    }
  });

  it('two Authorization headers are a 400 on /v1 and /mcp (not first-wins)', async () => {
    const v1 = await raw(effectd.url, `GET /v1/whoami HTTP/1.1\r\nAuthorization: Bearer ${token.agent}\r\nAuthorization: Bearer ${token.operator}`);
    expect(v1.status).toBe(400);
    expect(jsonOf(v1.body)).toMatchObject({ error: 'invalid_command' });
    expect(jsonOf(v1.body).message).toMatch(/2 Authorization headers/);
    const mcp = await raw(effectd.url, `POST /mcp HTTP/1.1\r\nAuthorization: Bearer ${token.operator}\r\nAuthorization: Bearer ${token.agent}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream`, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })));
    expect(mcp.status).toBe(400);
    const one = await raw(effectd.url, `GET /v1/whoami HTTP/1.1\r\nAuthorization: Bearer ${token.agent}`);
    expect(one.status).toBe(200);
  });

  it('invalid UTF-8 in a JSON body is a 400, never replaced with U+FFFD and acted on', async () => {
    const before = await ledgered();
    const text = Buffer.from(JSON.stringify(charge('wf-utf8-XX')));
    const at = text.indexOf('XX');
    text[at] = 0xff;
    text[at + 1] = 0xfe;
    const answer = await raw(effectd.url, `POST /v1/effects HTTP/1.1\r\nAuthorization: Bearer ${token.agent}\r\nContent-Type: application/json`, text);
    expect(answer.status).toBe(400);
    expect(jsonOf(answer.body)).toMatchObject({ error: 'invalid_json' });
    expect(jsonOf(answer.body).message).toMatch(/not valid UTF-8/);
    // The same on /mcp: the call is not executed.
    const call = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'payments_charge', arguments: { invoiceId: 'INV-XX', amount: 4900 }, _meta: { 'dev.effectd/workflowId': 'wf-utf8-mcp', 'dev.effectd/step': 1 } } }));
    const x = call.indexOf('XX');
    call[x] = 0xc3;
    call[x + 1] = 0x28;
    const mcp = await raw(effectd.url, `POST /mcp HTTP/1.1\r\nAuthorization: Bearer ${token.agent}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream`, call);
    expect(mcp.status).toBe(400);
    expect(jsonOf(mcp.body).error.message).toMatch(/not valid UTF-8/);
    expect(await ledgered()).toBe(before);
  });

  it('a URL with malformed percent-encoding gets effectd\'s error shape, not Fastify\'s', async () => {
    const answer = await raw(effectd.url, `GET /v1/effects/%E0%A4%A HTTP/1.1\r\nAuthorization: Bearer ${token.agent}`);
    expect(answer.status).toBe(400);
    const body = jsonOf(answer.body);
    expect(body).toMatchObject({ error: 'bad_request', action: 'invalid_input' });
    expect(body.message).toMatch(/percent-encoding/);
    expect(body.statusCode).toBeUndefined();
  });

  it('another tenant\'s effect is 404, worded exactly as one that does not exist (403 told that the id exists)', async () => {
    const acme = await postJson(`${effectd.url}/v1/effects`, charge('wf-acme'), as(token.acme));
    expect(acme.status).toBe(200);
    const theirs = await getJson(`${effectd.url}/v1/effects/${acme.body.effectId}`, as(token.agent));
    const missing = await getJson(`${effectd.url}/v1/effects/eff_0000000000000000000000000000000000000000`, as(token.agent));
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(theirs.body.message.replace(acme.body.effectId, 'ID')).toBe(missing.body.message.replace('eff_0000000000000000000000000000000000000000', 'ID'));
    expect((await getJson(`${effectd.url}/v1/effects/${acme.body.effectId}`, as(token.acme))).status).toBe(200);
  });

  it('amount 0 is refused in a money field (also "0.00 USD"); nothing recorded', async () => {
    const before = await ledgered();
    for (const amount of [0, '0.00 USD', '0 USD']) {
      const answer = await postJson(`${effectd.url}/v1/effects`, charge(`wf-zero-${String(amount).replace(/\W/g, '')}`, amount), as(token.agent));
      expect(answer.status, String(amount)).toBe(400);
      expect(answer.body.fields.map((f: { path: string }) => f.path)).toContain('args.amount');
      expect(answer.body.message).toMatch(/more than zero/);
    }
    expect(await ledgered()).toBe(before);
  });

  it('a configured token that is long but not random (24 × "a", a repeated word) is refused, saying why', () => {
    for (const weak of ['a'.repeat(24), 'abcabcabcabcabcabcabcabc', 'secretsecretsecretsecret', 'aaaaaaaaaaaaaaaaaaaaaaab']) {
      expect(weakTokenProblem(weak), weak).toMatch(/not random/);
      const dir = tempDir();
      writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ credentials: [{ token: weak, role: 'agent', tenant: 'default', name: 'weak' }] }), { mode: 0o600 });
      expect(() => loadCredentials(dir), weak).toThrow(/credentials\.0\.token: the token is not random.*openssl rand/);
    }
    for (let i = 0; i < 50; i++) expect(weakTokenProblem(randomBytes(12).toString('hex'))).toBeUndefined();
    expect(weakTokenProblem(`efd_agent_${randomBytes(24).toString('base64url')}`)).toBeUndefined();
  });

  it('answers carry X-Content-Type-Options: nosniff and Cache-Control: no-store (API, errors, health, /mcp)', async () => {
    const answers = [
      await fetch(`${effectd.url}/v1/whoami`, { headers: as(token.agent) }),
      await fetch(`${effectd.url}/v1/effects/eff_none`, { headers: as(token.agent) }),
      await fetch(`${effectd.url}/v1/whoami`),
      await fetch(`${effectd.url}/healthz`),
      await fetch(`${effectd.url}/mcp`, { method: 'POST', headers: { ...as(token.agent), 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) }),
    ];
    for (const res of answers) {
      expect(res.headers.get('x-content-type-options'), res.url).toBe('nosniff');
      expect(res.headers.get('cache-control'), res.url).toMatch(/^no-store(, no-transform)?$/);
    }
  });

  it('the docs never tell to run a bare `npx effectd` (the name is not claimed on npm): the installed bin instead', () => {
    const root = packageRoot();
    const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f)), ...readdirSync(join(root, 'examples')).map((f) => join('examples', f))];
    const offending = files.flatMap((file) => {
      let text: string;
      try {
        text = readFileSync(join(root, file), 'utf8');
      } catch {
        return [];
      }
      return text.split('\n').filter((line) => /npx effectd/.test(line) && !/not a bare `npx effectd`|never a bare `npx effectd`/.test(line)).map((line) => `${file}: ${line.trim()}`);
    });
    expect(offending).toEqual([]);
  });
});
