import { AsyncLocalStorage } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
import { createLogger } from '../../src/logging/logger.js';
import { serveMcpOnLoopback } from '../../src/mcp/loopback-server.js';
import { closeUpstreams } from '../../src/providers/mcp-provider.js';
import { installInMemoryTracing, type InMemoryTracing } from '../../src/tracing/in-memory-tracing.js';
import { z } from 'zod';
import { getJson, postJson, startEffectd, tempDir, waitFor } from '../support/effectd-harness.js';

/**
 * Issue 27, rule 1: secrets never leave through a derived text. A real local HTTP provider echoes
 * what it was sent in every shape providers do (JSON, plain text, HTML, a 2xx that is an error, the
 * URL with its credentials, a base64 dump, a long body cut at 300 characters, a lost reply whose
 * lookup URL carries credentials and the key); random secrets are planted in every configurable
 * place (headers of several names and schemes, URL user and password of two providers, one of which
 * effectd sends as Basic, a credential-named provider value in the lookup's query; an upstream MCP
 * server's headers and lookup arguments, its refusal and its lookup's error echoing them). Then EVERY
 * output channel is searched for every form of every secret and for the provider keys: the agent's
 * answers, every ledger event, the workflow timeline and the effect detail as an agent and as an
 * operator, the log records, the trace spans and the metrics.
 *
 * Without the boundary (ShellCore.exchangeText returning its text unchanged) this fails on the first
 * run: the agent's answer quotes the Authorization header.
 */
const ASCII = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', ...'"\\/+=%&<>:@!#$\'()*,;?[]^_`{|}~-.', ' '];
const secret = fc.string({ unit: fc.constantFrom(...ASCII), minLength: 10, maxLength: 36 }).map((s) => s.trim()).filter((s) => s.length >= 10);

interface Plant {
  scheme: 'Bearer' | 'Token' | 'Basic';
  token: string;
  basicUser: string;
  basicPass: string;
  keyHeader: string;
  apiKey: string;
  userA: string;
  passA: string;
  apiToken: string;
  routeHeader: string;
  route: string;
  userB: string;
  passB: string;
  mcpToken: string;
  mcpKey: string;
  cut: number;
}

const plant: fc.Arbitrary<Plant> = fc.record({
  scheme: fc.constantFrom('Bearer' as const, 'Token' as const, 'Basic' as const),
  token: secret, basicUser: secret.map((s) => s.replace(/:/g, '')).filter((s) => s.length >= 10), basicPass: secret,
  keyHeader: fc.constantFrom('X-Api-Key', 'Api-Key', 'X-Auth-Token', 'X-Client-Secret', 'Private-Token'),
  apiKey: secret, userA: secret, passA: secret, apiToken: secret,
  routeHeader: fc.constantFrom('X-Route', 'X-Tenant', 'X-Org-Id'), route: secret,
  userB: secret, passB: secret,
  mcpToken: secret, mcpKey: secret,
  cut: fc.integer({ min: 1, max: 9 }),
});

const b64 = (text: string) => Buffer.from(text).toString('base64');
const jsonEscaped = (text: string) => JSON.stringify(text).slice(1, -1);

/** The values the configuration holds, and the forms a reader could take them back from. */
function planted(p: Plant): string[] {
  const values = [p.apiKey, p.passA, p.userA, p.apiToken, p.route, p.userB, p.passB, `${p.userB}:${p.passB}`, b64(`${p.userB}:${p.passB}`), p.mcpToken, p.mcpKey];
  if (p.scheme === 'Basic') values.push(b64(`${p.basicUser}:${p.basicPass}`), p.basicPass, p.basicUser);
  else values.push(p.token);
  return values.flatMap((v) => [v, jsonEscaped(v), jsonEscaped(jsonEscaped(v)), encodeURIComponent(v), b64(v)]);
}

/** The provider: answers each path in one shape, each an echo of what effectd sent. */
function echoProvider(): http.Server {
  return http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const headers = req.headers;
      const lines = Object.entries(headers).map(([name, value]) => `${name}: ${String(value)}`).join('\n');
      const path = (req.url ?? '/').split('?')[0]!;
      const send = (status: number, type: string, body: string) => res.writeHead(status, { 'content-type': type }).end(body);
      if (req.method === 'GET' && path === '/lookup') return send(200, 'application/json', JSON.stringify({ data: { note: 'not a list', headers } }));
      switch (path) {
        case '/json400':
          return send(400, 'application/json', JSON.stringify({ error: 'bad request', headers }));
        case '/text500':
          return send(500, 'text/plain', `internal error while handling\n${lines}`);
        case '/html502':
          return send(502, 'text/html', `<html><body><h1>502 Bad Gateway</h1><pre>${lines.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')}</pre></body></html>`);
        case '/ok-error':
          return send(200, 'application/json', JSON.stringify({ status: 'error', error: { message: 'invalid credentials', request: { headers } } }));
        case '/url': {
          const basic = /^Basic (.+)$/.exec(String(headers.authorization ?? ''));
          const [user, ...pass] = basic ? Buffer.from(basic[1]!, 'base64').toString().split(':') : ['', ''];
          return send(422, 'text/plain', `cannot reach upstream http://${user}:${pass.join(':')}@${headers.host}${req.url} (idempotency key ${String(headers['idempotency-key'])})`);
        }
        case '/base64':
          return send(400, 'application/json', JSON.stringify({ error: 'debug dump attached', dump: b64(lines) }));
        case '/long': {
          // The API key straddles the reason's 300-character cut by `cut` characters.
          const { cut } = JSON.parse(raw) as { cut: number };
          const key = String(headers['x-api-key'] ?? headers['api-key'] ?? headers['x-auth-token'] ?? headers['x-client-secret'] ?? headers['private-token']);
          return send(400, 'text/plain', `${'.'.repeat(300 - cut)}${key}${'.'.repeat(40)}`);
        }
        case '/lost':
          return req.socket.destroy();
        default:
          return send(404, 'text/plain', 'no such path');
      }
    });
  });
}

/** An upstream MCP server that refuses with the headers (and key) it got, and whose lookup fails quoting them. */
async function echoMcpUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const reply = new AsyncLocalStorage<ServerResponse>();
  const headers = () => reply.getStore()?.req.headers ?? {};
  const build = () => {
    const server = new McpServer({ name: 'echo-upstream', version: '1.0.0' });
    const args = z.object({ n: z.string(), cut: z.number() });
    server.registerTool('refuse', { inputSchema: args }, async (_args, ctx): Promise<CallToolResult> => ({
      isError: true, content: [{ type: 'text', text: `unauthorized: ${JSON.stringify({ headers: headers(), meta: ctx.mcpReq._meta })}` }],
    }));
    server.registerTool('drop', { inputSchema: args }, async (): Promise<CallToolResult> => {
      reply.getStore()?.destroy();
      reply.getStore()?.socket?.destroy();
      throw new Error('reply dropped on purpose');
    });
    server.registerTool('search', { inputSchema: z.object({ key: z.string(), token: z.string() }) }, async (query): Promise<CallToolResult> => ({
      isError: true, content: [{ type: 'text', text: `search refused for ${JSON.stringify(query)}: ${JSON.stringify(headers())}` }],
    }));
    return server;
  };
  return serveMcpOnLoopback(build, reply);
}

const TOOLS: { name: string; path: string; provider: 'a' | 'b' | 'm'; extra?: Record<string, unknown> }[] = [
  { name: 'echo.json', path: '/json400', provider: 'a' },
  { name: 'echo.text', path: '/text500', provider: 'a', extra: { answerBudgetMs: 0, resends: { max: 1, withinMs: 60_000 } } },
  { name: 'echo.html', path: '/html502', provider: 'b', extra: { answerBudgetMs: 0, resends: { max: 1, withinMs: 60_000 } } },
  { name: 'echo.ok-error', path: '/ok-error', provider: 'a', extra: { classify: [{ status: 200, bodyIncludes: '"status":"error"', outcome: 'failed_before_effect' }] } },
  { name: 'echo.url', path: '/url', provider: 'b' },
  { name: 'echo.base64', path: '/base64', provider: 'a' },
  { name: 'echo.long', path: '/long', provider: 'a' },
  {
    name: 'echo.lost', path: '/lost', provider: 'a',
    extra: { answerBudgetMs: 400, timeoutMs: 2_000, resends: { max: 0, withinMs: 60_000 }, lookup: { by: 'key', path: '/lookup?key={key}&api_token={provider.apiToken}', resultsPath: 'data' } },
  },
  { name: 'upstream.refuse', path: 'refuse', provider: 'm' },
  {
    name: 'upstream.drop', path: 'drop', provider: 'm',
    extra: { answerBudgetMs: 400, timeoutMs: 2_000, resends: { max: 0, withinMs: 60_000 }, lookupTool: { by: 'key', tool: 'search', arguments: { key: '{key}', token: '{provider.apiToken}' }, resultsPath: 'structuredContent.items' } },
  },
];

function writeConfig(dir: string, providerUrl: string, mcpUrl: string, p: Plant): string {
  const { port } = new URL(providerUrl);
  const authorization = p.scheme === 'Basic' ? `Basic ${b64(`${p.basicUser}:${p.basicPass}`)}` : `${p.scheme} ${p.token}`;
  const config = {
    builtinTools: false,
    builtinSagas: false,
    providers: {
      a: { baseUrl: `http://${encodeURIComponent(p.userA)}:${encodeURIComponent(p.passA)}@127.0.0.1:${port}`, headers: { Authorization: authorization, [p.keyHeader]: p.apiKey }, values: { apiToken: p.apiToken } },
      b: { baseUrl: `http://${encodeURIComponent(p.userB)}:${encodeURIComponent(p.passB)}@127.0.0.1:${port}`, headers: { [p.routeHeader]: p.route } },
      m: { mcp: { url: mcpUrl, headers: { Authorization: `Bearer ${p.mcpToken}`, 'X-Upstream-Key': p.mcpKey } }, values: { apiToken: p.apiToken } },
    },
    tools: TOOLS.map(({ name, path, provider, extra = {} }) => {
      const { lookupTool, ...rest } = extra;
      const common = { name, provider, args: { n: { type: 'string' }, cut: { type: 'integer' } }, target: 'item {args.n}', reversibility: 'irreversible', settleWindowMs: 60_000, timeoutMs: 5_000 };
      if (provider === 'm') return { ...common, mcp: { tool: path, ...(lookupTool ? { lookup: lookupTool } : {}) }, idempotency: { kind: 'meta', retentionMs: 86_400_000 }, ...rest };
      return { ...common, request: { path }, idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 86_400_000 }, receiptPath: 'id', ...rest };
    }),
  };
  const file = join(dir, 'effectd.config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** Each place a planted form or a provider key shows, as `channel: form`. */
function leaksIn(channel: string, text: string, forms: readonly string[]): string[] {
  return forms.filter((form) => text.includes(form)).map((form) => `${channel}: ${JSON.stringify(form)}`);
}

describe('secrets never leave through a derived text (a real provider echoing them, every output channel)', () => {
  let provider: http.Server;
  let providerUrl = '';
  let upstream: { url: string; close(): Promise<void> };
  let tracing: InMemoryTracing;

  beforeAll(async () => {
    provider = echoProvider();
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    upstream = await echoMcpUpstream();
    tracing = installInMemoryTracing();
  });
  afterAll(async () => {
    await tracing?.uninstall();
    await upstream?.close();
    await new Promise((resolve) => provider?.close(resolve));
  });

  it('property: no planted secret, in any form, and no provider key reaches an agent, the ledger, a timeline, a log, a span or a metric', async () => {
    let run = 0;
    await fc.assert(fc.asyncProperty(plant, async (p) => {
      run++;
      tracing.reset();
      const dataDir = tempDir('effectd-secrets-');
      const logLines: string[] = [];
      const stream = new Writable({ write: (chunk: Buffer, _enc, done) => { logLines.push(chunk.toString()); done(); } });
      const logger = createLogger({ fd: 2, stream } as Parameters<typeof createLogger>[0]);
      logger.level = 'debug';
      const effectd = await startEffectd({ dataDir, configFile: writeConfig(dataDir, providerUrl, upstream.url, p), logger });
      try {
        const workflowId = `wf-secrets-${run}`;
        const answers: string[] = [];
        const effectIds: string[] = [];
        for (const [i, tool] of TOOLS.entries()) {
          const answer = await postJson(`${effectd.url}/v1/effects`, { workflowId, step: i + 1, tool: tool.name, args: { n: `n${i}`, cut: p.cut } }, effectd.agent);
          expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(500);
          answers.push(JSON.stringify(answer.body));
          effectIds.push(answer.body.effectId);
        }
        const events = async () => (await effectd.runtime.ledger.readAll(0, 1_000_000)).map((r) => r.event as LedgerEvent);
        // The lost reply's lookup (its URL carries the user, password, key and api token) is in the ledger.
        await waitFor('the lookups of the lost replies (HTTP and MCP)', async () => ((await events()).filter((e) => e.type === 'ReconciliationChecked').map((e) => (e as { asked: string }).asked.startsWith('MCP')).reduce((seen, mcp) => seen.add(mcp), new Set<boolean>()).size === 2 ? true : undefined), 10_000);

        const ledger = await events();
        const keys = [...new Set(ledger.flatMap((e) => (e.type === 'AttemptStarted' && e.providerKey ? [e.providerKey] : [])))];
        expect(keys.length).toBeGreaterThanOrEqual(TOOLS.length);
        const forms = planted(p);
        const leaks: string[] = [];

        // The agent's answers: neither the secrets nor the keys.
        for (const answer of answers) leaks.push(...leaksIn('agent answer', answer, [...forms, ...keys]));
        // Every ledger event: no secret anywhere; a key only as the attempt's providerKey.
        for (const event of ledger) {
          const text = JSON.stringify(event);
          leaks.push(...leaksIn(`ledger ${event.type}`, text, forms));
          const { providerKey: _key, ...rest } = event as LedgerEvent & { providerKey?: unknown };
          leaks.push(...leaksIn(`ledger ${event.type} (free texts)`, JSON.stringify(rest), keys));
        }
        // The timeline and the effect detail, as the agent (no key at all) and as an operator (a key only as providerKey).
        const timeline = await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.agent);
        expect(timeline.status).toBe(200);
        leaks.push(...leaksIn('agent timeline', JSON.stringify(timeline.body), [...forms, ...keys]));
        const operatorTimeline = await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.operator);
        for (const entry of operatorTimeline.body.timeline as { summary: string; event: Record<string, unknown> }[]) {
          const { providerKey: _key, ...rest } = entry.event;
          leaks.push(...leaksIn('operator timeline', JSON.stringify(entry), forms), ...leaksIn('operator timeline (free texts)', JSON.stringify({ ...entry, event: rest, summary: entry.summary.replace(/\bkey efd-\S+/, '') }), keys));
        }
        for (const effectId of effectIds) {
          const detail = await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.agent);
          leaks.push(...leaksIn('agent effect detail', JSON.stringify(detail.body), [...forms, ...keys]));
        }
        // The log records, the spans, the metrics.
        expect(logLines.length).toBeGreaterThan(0);
        leaks.push(...leaksIn('log', logLines.join(''), [...forms, ...keys]));
        const spans = tracing.spans();
        expect(spans.length).toBeGreaterThan(0);
        leaks.push(...leaksIn('trace', JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links }))), [...forms, ...keys]));
        const metrics = await fetch(`${effectd.url}/metrics`).then((r) => r.text());
        leaks.push(...leaksIn('metrics', metrics, [...forms, ...keys]));

        expect(leaks).toEqual([]);
        // The redaction is visible where it happened: the reasons say what was blanked.
        const reasons = ledger.flatMap((e) => (e.type === 'AttemptFinished' ? [e.reason] : []));
        expect(reasons.some((r) => r.includes('[redacted]'))).toBe(true);
        const checks = ledger.filter((e): e is Extract<LedgerEvent, { type: 'ReconciliationChecked' }> => e.type === 'ReconciliationChecked');
        // The agent's timeline abridges each attempt's key; the operator's has it whole (the reconciliation handle).
        const startedFor = (body: { timeline: { event: LedgerEvent }[] }) => body.timeline.flatMap((t) => (t.event.type === 'AttemptStarted' ? [t.event.providerKey] : []));
        expect(startedFor(timeline.body).every((k) => /^efd-[\w-]{4}…$/.test(String(k)))).toBe(true);
        expect(new Set(startedFor(operatorTimeline.body))).toEqual(new Set(keys));
        expect(checks.find((c) => c.asked.startsWith('GET'))!.asked).toMatch(new RegExp(`^GET http://127\\.0\\.0\\.1:\\d+/lookup\\?key=\\[provider key efd-[\\w-]{4}…\\]&api_token=\\[redacted\\]$`));
        expect(checks.find((c) => c.asked.startsWith('MCP'))).toMatchObject({ asked: expect.stringMatching(/^MCP tools\/call search \{"key":"\[provider key efd-[\w-]{4}…\]","token":"\[redacted\]"\}$/), seen: expect.stringContaining('[redacted]') });
      } finally {
        await effectd.close();
        await closeUpstreams();
      }
    }), { numRuns: 6, endOnFailure: true });
  }, 240_000);
});
