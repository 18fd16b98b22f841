import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchResult } from '../../src/core/dispatch-result.js';
import { encodeCommand } from '../../src/sdk/index.js';
import { EffectCommandProcessor } from '../../src/transport/kafka/effect-command-processor.js';
import { startEffectd, type InProcessEffectd } from '../support/effectd-harness.js';

/**
 * Issue 27, rule 6: one body limit setting for every door. /v1 capped bodies at 1 MB while /mcp
 * took 4 MiB (the MCP SDK's default): a 3 MB argument was ledgered through MCP. Now
 * EFFECTD_BODY_LIMIT_BYTES (default 1 MiB) is the limit of HTTP, /mcp and Kafka command messages.
 */
const MIB = 1024 * 1024;
const padded = (bytes: number) => ({ workflowId: 'wf-big', step: 1, tool: 'payments.charge', args: { invoiceId: 'x'.repeat(bytes), amount: 100 } });
const mcpCall = (bytes: number) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'payments_charge', arguments: { invoiceId: 'x'.repeat(bytes), amount: 100 }, _meta: { 'dev.effectd/workflowId': 'wf-big-mcp', 'dev.effectd/step': 1 } } });
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

/** A body sent chunked (no Content-Length), as a stream. */
function chunked(text: string): { body: ReadableStream<Uint8Array>; duplex: 'half' } {
  const bytes = new TextEncoder().encode(text);
  return { body: new ReadableStream({ start(c) { for (let i = 0; i < bytes.length; i += 64 * 1024) c.enqueue(bytes.slice(i, i + 64 * 1024)); c.close(); } }), duplex: 'half' };
}

describe('one body limit for every door (EFFECTD_BODY_LIMIT_BYTES)', () => {
  let effectd: InProcessEffectd;
  let small: InProcessEffectd;
  let dispatched = 0;
  const dispatcher = async (): Promise<DispatchResult> => {
    dispatched++;
    return { kind: 'response', status: 200, headers: { 'content-type': 'application/json' }, body: { id: 'ch_big', object: 'charge', status: 'succeeded' }, latencyMs: 1 };
  };
  const ledgered = async (app: InProcessEffectd) => (await app.runtime.ledger.readAll(0, 1_000_000)).length;

  beforeAll(async () => {
    effectd = await startEffectd({ dispatcher });
    small = await startEffectd({ dispatcher, env: { EFFECTD_BODY_LIMIT_BYTES: '65536' } });
  });
  afterAll(async () => {
    await effectd?.close();
    await small?.close();
  });

  it('default 1 MiB: a 1.5 MB command is refused by /v1 and by /mcp alike (declared or chunked), nothing ledgered', async () => {
    const before = await ledgered(effectd);
    const http = await fetch(`${effectd.url}/v1/effects`, { method: 'POST', headers: { 'content-type': 'application/json', ...effectd.agent }, body: JSON.stringify(padded(1.5 * MIB)) });
    expect(http.status).toBe(413);
    expect(((await http.json()) as { message: string }).message).toMatch(/EFFECTD_BODY_LIMIT_BYTES/);
    const mcp = await fetch(`${effectd.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, ...effectd.agent }, body: mcpCall(1.5 * MIB) });
    expect(mcp.status).toBe(413);
    const mcpChunked = await fetch(`${effectd.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, ...effectd.agent }, ...chunked(mcpCall(1.5 * MIB)) } as RequestInit);
    expect(mcpChunked.status).toBe(413);
    expect(await ledgered(effectd)).toBe(before);
    expect(dispatched).toBe(0);
  });

  it('a lower limit applies to every door: 64 kB refused on /v1, /mcp and Kafka; under it accepted', async () => {
    expect((await fetch(`${small.url}/v1/effects`, { method: 'POST', headers: { 'content-type': 'application/json', ...small.agent }, body: JSON.stringify(padded(70_000)) })).status).toBe(413);
    expect((await fetch(`${small.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, ...small.agent }, body: mcpCall(70_000) })).status).toBe(413);
    // Under the limit, both doors take it (the tool's schema decides about the argument itself).
    expect((await fetch(`${small.url}/v1/effects`, { method: 'POST', headers: { 'content-type': 'application/json', ...small.agent }, body: JSON.stringify(padded(100)) })).status).toBe(200);
    expect((await fetch(`${small.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, ...small.agent }, body: mcpCall(100) })).status).toBe(200);

    // Kafka: the ingress's processor with the limit the ingress gives it (settings.kafka.maxCommandBytes).
    const settings = (await import('../../src/config/settings-loader.js')).loadSettings({ EFFECTD_BODY_LIMIT_BYTES: '65536' });
    expect(settings.kafka.maxCommandBytes).toBe(65_536);
    expect(settings.http.bodyLimitBytes).toBe(65_536);
    const processor = new EffectCommandProcessor(small.runtime, { commands: 'c', outcomes: 'o', deadLetters: 'd' }, { maxCommandBytes: settings.kafka.maxCommandBytes, log: () => {} });
    const lease = { isActive: () => true, heartbeat: async () => {} };
    const big = await processor.process({ value: Buffer.from(encodeCommand(padded(70_000) as never, 'c-big')), where: 'c[0]@1', headers: { authorization: small.agent.authorization! } }, lease);
    expect(big).toMatchObject({ kind: 'dead-letter', reason: 'too_large' });
    const fits = await processor.process({ value: Buffer.from(encodeCommand({ ...padded(100), workflowId: 'wf-kafka-fits' } as never, 'c-fits')), where: 'c[0]@2', headers: { authorization: small.agent.authorization! } }, lease);
    expect(fits.kind).toBe('answer');
  });
});
