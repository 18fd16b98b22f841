import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyDispatch, type ClassificationRules } from '../../src/core/classify.js';
import type { DispatchResult } from '../../src/core/dispatch-result.js';
import { parseConfig } from '../../src/config/config-loader.js';
import { ToolRegistry } from '../../src/providers/tool-registry.js';

const response = (status: number, replayed: boolean, body: unknown = { error: { type: 'api_error' } }): DispatchResult => ({
  kind: 'response', status, headers: replayed ? { 'idempotent-replayed': 'true' } : {}, body, latencyMs: 1,
});
const rules = (storedFailures?: 'replayed' | 'retried'): ClassificationRules => ({
  receiptPath: 'id', replayHeader: 'idempotent-replayed', ...(storedFailures ? { storedFailures } : {}),
});

describe('classifyDispatch: what a replayed failure means depends on storedFailures', () => {
  it('replayed (Stripe v1, the default): a replayed 5xx/408/409/429 poisons the key (terminal_failure)', () => {
    for (const storedFailures of [undefined, 'replayed'] as const) {
      for (const status of [500, 502, 503, 408, 409, 429]) {
        const c = classifyDispatch(response(status, true), rules(storedFailures));
        expect(c, `${status} ${storedFailures}`).toMatchObject({ outcome: 'terminal_failure', httpStatus: status, replayed: true });
        expect(c.reason).toMatch(/replays a stored HTTP/);
      }
    }
  });

  it('retried (Stripe v2): a replayed 5xx leaves the outcome open (unknown): a same-key resend can still complete it', () => {
    for (const status of [500, 502, 503, 408, 409, 429]) {
      const c = classifyDispatch(response(status, true), rules('retried'));
      expect(c, String(status)).toMatchObject({ outcome: 'unknown', httpStatus: status, replayed: true });
      expect(c.reason).toMatch(/storedFailures: retried/);
    }
  });

  it('a first-hand 5xx is unknown either way', () => {
    for (const storedFailures of ['replayed', 'retried'] as const) {
      expect(classifyDispatch(response(500, false), rules(storedFailures))).toMatchObject({ outcome: 'unknown', replayed: false });
    }
  });

  it('the rest does not depend on it: a replayed 2xx is committed with its receipt, a replayed refusal is failed_before_effect', () => {
    for (const storedFailures of ['replayed', 'retried'] as const) {
      expect(classifyDispatch(response(200, true, { id: 'ch_1' }), rules(storedFailures))).toMatchObject({ outcome: 'committed', receipt: 'ch_1', replayed: true });
      expect(classifyDispatch(response(400, true), rules(storedFailures))).toMatchObject({ outcome: 'failed_before_effect', replayed: true });
      expect(classifyDispatch({ kind: 'lost', error: 'timeout', latencyMs: 1 }, rules(storedFailures))).toMatchObject({ outcome: 'unknown' });
    }
  });

  it('a tool\'s own classify override still wins', () => {
    const c = classifyDispatch(response(500, true), { ...rules('retried'), overrides: [{ status: 500, outcome: 'terminal_failure' }] });
    expect(c.outcome).toBe('terminal_failure');
  });
});

describe('tool contracts: idempotency.storedFailures reaches the tool\'s classification', () => {
  const config = (idempotency: Record<string, unknown>) => parseConfig({
    builtinTools: false,
    providers: { p: { baseUrl: 'http://127.0.0.1:9' } },
    tools: [{
      name: 'p.charge', provider: 'p', request: { path: '/v1/charges' }, args: { amount: { type: 'integer' } }, target: 'x',
      reversibility: 'compensable', idempotency, replayHeader: 'Idempotent-Replayed',
    }],
  }, 'test');

  it('defaults to replayed for header and body-field keys, and carries retried through', () => {
    const header = new ToolRegistry(config({ kind: 'header', retentionMs: 1000 })).get('p.charge')!;
    expect(header.spec.idempotency).toMatchObject({ storedFailures: 'replayed' });
    expect(header.classification.storedFailures).toBe('replayed');
    expect(classifyDispatch(response(500, true), header.classification).outcome).toBe('terminal_failure');

    const v2 = new ToolRegistry(config({ kind: 'header', retentionMs: 2_592_000_000, storedFailures: 'retried' })).get('p.charge')!;
    expect(v2.classification.storedFailures).toBe('retried');
    expect(v2.keyRetentionMs).toBe(2_592_000_000);
    expect(classifyDispatch(response(500, true), v2.classification).outcome).toBe('unknown');

    const token = new ToolRegistry(parseConfig({
      builtinTools: false,
      providers: { p: { baseUrl: 'http://127.0.0.1:9' } },
      tools: [{
        name: 'p.create', provider: 'p', request: { path: '/things', body: { clientToken: '{key}' } }, args: { n: { type: 'integer' } }, target: 'x',
        reversibility: 'compensable', idempotency: { kind: 'body-field', field: 'clientToken', retentionMs: 1000, storedFailures: 'retried' },
      }],
    }, 'test')).get('p.create')!;
    expect(token.classification.storedFailures).toBe('retried');
  });

  it('refuses another value, naming the field', () => {
    expect(() => config({ kind: 'header', retentionMs: 1000, storedFailures: 'frozen' })).toThrow(/idempotency\.storedFailures/);
  });

  it('the built-in payments.charge-v2 declares Stripe v2: 30-day retention, failures retried', () => {
    const builtin = new ToolRegistry(parseConfig(JSON.parse(readBuiltin()), 'config/builtin-tools.json'));
    const v2 = builtin.get('payments.charge-v2')!;
    expect(v2.provider.name).toBe('payments-v2');
    expect(v2.keyRetentionMs).toBe(30 * 24 * 60 * 60 * 1000);
    expect(v2.classification.storedFailures).toBe('retried');
    expect(builtin.get('payments.charge')!.classification.storedFailures).toBe('replayed');
  });
});

describe('classifyDispatch: a reason says what came back in the provider\'s own words', () => {
  const mcp = (status: number, said: string, body: unknown): DispatchResult => ({ kind: 'response', status, said, headers: {}, body, latencyMs: 1 });

  it('an upstream MCP tool\'s isError result is a refusal worded as one, not as HTTP 400', () => {
    const c = classifyDispatch(mcp(400, 'an isError result of the upstream MCP tool', { isError: true, content: [{ type: 'text', text: 'card declined' }] }), {});
    expect(c).toMatchObject({ outcome: 'failed_before_effect', httpStatus: 400 });
    expect(c.reason).toMatch(/^refused with an isError result of the upstream MCP tool: \{"isError":true/);
    expect(c.reason).not.toMatch(/HTTP/);
  });

  it('a JSON-RPC error that leaves the outcome open names its code; a result is committed with no status', () => {
    expect(classifyDispatch(mcp(502, 'JSON-RPC error -32603 from the upstream MCP server', { jsonrpcError: { code: -32603 } }), {}).reason).toMatch(/^JSON-RPC error -32603 from the upstream MCP server leaves the outcome open: /);
    expect(classifyDispatch(mcp(200, 'a result of the upstream MCP tool', { content: [] }), {})).toMatchObject({ outcome: 'committed', reason: 'a result of the upstream MCP tool' });
  });

  it('an HTTP provider\'s answers are still worded by their status', () => {
    expect(classifyDispatch(response(402, false), rules()).reason).toMatch(/^refused with HTTP 402: /);
  });
});

function readBuiltin(): string {
  return readFileSync(new URL('../../config/builtin-tools.json', import.meta.url), 'utf8');
}
