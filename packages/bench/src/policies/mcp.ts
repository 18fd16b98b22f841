import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { sleep } from '../bench-http.js';
import type { EffectdEndpoint } from '../effectd-fleet.js';
import type { BenchUpstreamMcp } from '../upstream-mcp.js';
import { upstreamToolName } from '../upstream-mcp.js';
import type { EffectdPolicy, Route } from './effectd.js';
import type { Observation, Policy, ToolCall } from './policy.js';
import { CodedError } from '../../../../src/shared/coded-error.js';

const WITH_A_HUMAN = new Set(['escalated', 'terminal_failure']);
/** How often the harness re-issues a call effectd answered `unknown` (a new JSON-RPC id, the same `_meta`). */
const REISSUE_UNKNOWN_MS = 250;
/** `mcp-direct` re-issues a call whose response stream broke at most this many times (then it reports the error to the model). */
export const MCP_DIRECT_REISSUES = 2;

type Attempt = { kind: 'result'; result: CallToolResult } | { kind: 'broken'; error: string } | { kind: 'cancelled' };

/**
 * One agent's connection through the official MCP client SDK (Streamable HTTP, the agent's bearer
 * token). Every `tools/call` is a new JSON-RPC request (the SDK numbers them); a call whose response
 * stream broke is reported as `broken`, and the next call reconnects.
 */
export class McpLink {
  private client: Client | undefined;
  private connectedTo: string | undefined;
  /** JSON-RPC requests made for tools/call, re-issues included. */
  calls = 0;

  constructor(private readonly where: () => { url: string; token: string | undefined }) {}

  async call(name: string, args: Record<string, unknown>, meta: Record<string, unknown> | undefined, signal: AbortSignal, timeoutMs: number): Promise<Attempt> {
    if (signal.aborted) return { kind: 'cancelled' };
    try {
      const client = await this.connected();
      this.calls += 1;
      const result = await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }, { signal, timeout: timeoutMs });
      return { kind: 'result', result: result as CallToolResult };
    } catch (error) {
      if (signal.aborted) return { kind: 'cancelled' };
      await this.close();
      return { kind: 'broken', error: (error as Error).message.split('\n')[0] ?? String(error) };
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.connectedTo = undefined;
    await client?.close().catch(() => undefined);
  }

  private async connected(): Promise<Client> {
    const { url, token } = this.where();
    if (this.client && this.connectedTo === url) return this.client;
    await this.close();
    const client = new Client({ name: 'effectd-bench-agent', version: '1.0.0' });
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    this.client = client;
    this.connectedTo = url;
    return client;
  }
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join(' ');
}

/**
 * effectd through its MCP front door (/mcp), as a harness drives it with the official client SDK:
 * the identity in `_meta` (`dev.effectd/workflowId`, `step`, `slot`, `repeat`), never in the
 * JSON-RPC id; a broken response stream (effectd killed, restarting) is followed by the same call
 * under a new JSON-RPC id, as the MCP spec tells clients to; an `unknown` answer likewise, every
 * 250 ms, until it settles (the harness obeys "do not start another").
 */
export class McpEffectdPolicy implements Policy {
  readonly name = 'effectd-mcp';
  readonly obeysUnknown = true;
  readonly durableJournal = true;
  readonly link: McpLink;
  /** The arguments each step was first sent with: effectd binds the step to them, and the harness re-issues those. */
  private readonly decided = new Map<string, Record<string, unknown>>();

  constructor(private readonly route: Route, readonly http: EffectdPolicy, private readonly deadline: number) {
    this.link = new McpLink(() => mcpEndpoint(this.route()));
  }

  escalations(workflowId: string): Promise<number> {
    return this.http.escalations(workflowId);
  }

  async call(call: ToolCall): Promise<Observation> {
    const key = `${call.step}#${call.intent.slot}`;
    if (!this.decided.has(key)) this.decided.set(key, call.args);
    const meta = {
      'dev.effectd/workflowId': call.workflowId, 'dev.effectd/step': call.step, 'dev.effectd/slot': call.intent.slot,
      ...(call.repeat ? { 'dev.effectd/repeat': call.repeat.reason } : {}),
      // The lane measures how re-issued calls after `unknown` are absorbed: answers come at once, without inline settle.
      'dev.effectd/waitMs': 0,
    };
    for (let reissue = 0; ; reissue++) {
      const attempt = await this.link.call(upstreamToolName(call.intent.tool), call.args, meta, call.signal, 10_000);
      if (attempt.kind === 'cancelled') return { kind: 'error', ambiguous: true, text: 'the tools/call was cancelled before an answer came back (the stream closed)' };
      if (attempt.kind === 'result') return observeEffectd(attempt.result);
      // A broken response stream: the spec's client re-issues the call, a new JSON-RPC id, the same _meta.
      const wait = Math.min(100 * 2 ** reissue, 800);
      if (Date.now() + wait >= this.deadline) return { kind: 'unknown', text: `effectd's response stream broke and it did not answer before the deadline: ${attempt.error}` };
      await sleep(wait, call.signal);
    }
  }

  async settle(observation: Extract<Observation, { kind: 'unknown' }>, call: ToolCall, deadline: number): Promise<Observation> {
    let last: Observation = observation;
    while (Date.now() < Math.min(deadline, this.deadline)) {
      if (last.kind !== 'unknown') return last;
      if (last.state !== undefined && WITH_A_HUMAN.has(last.state)) return last;
      await sleep(REISSUE_UNKNOWN_MS);
      last = await this.call({ ...call, args: this.decided.get(`${call.step}#${call.intent.slot}`) ?? call.args });
    }
    return last;
  }
}

export function mcpEndpoint(endpoint: EffectdEndpoint): { url: string; token: string | undefined } {
  return { url: `${endpoint.url}/mcp`, token: endpoint.token };
}

/** effectd's tool result: structuredContent is the three-state outcome (`unknown` is never isError), or an error with its code. */
export function observeEffectd(result: CallToolResult): Observation {
  const body = (result.structuredContent ?? {}) as { status?: string; state?: string; effectId?: string; receipt?: string; reason?: string; message?: string; error?: string };
  const message = body.message ?? text(result);
  if (body.error === 'intent_conflict') return { kind: 'conflict', text: message };
  if (body.error === 'unauthorized' || body.error === 'forbidden') throw new CodedError('invalid_config', `effectd refused the benchmark's agent over MCP: ${message}`);
  switch (body.status) {
    case 'done':
      return { kind: 'done', text: message, ...(body.receipt ? { receipt: body.receipt } : {}), ...(body.state === 'held' ? { held: true } : {}) };
    case 'not_done':
      return { kind: 'not_done', text: message };
    case 'unknown': {
      const matched = body.state === 'held' ? /(?:which is|on the same target is) (\w+)/.exec(body.reason ?? '')?.[1] : undefined;
      const state = matched !== undefined && WITH_A_HUMAN.has(matched) ? matched : body.state;
      return { kind: 'unknown', text: message, ...(body.effectId ? { effectId: body.effectId } : {}), ...(state ? { state } : {}) };
    }
  }
  // Not an outcome: a refusal (invalid input, not recorded yet…). "not recorded yet" asks for the same call again.
  return { kind: 'error', ambiguous: body.error !== undefined && /retry|not recorded/.test(`${body.error} ${message}`), text: message };
}

/**
 * The baseline: the same MCP client straight to the upstream MCP server around the provider. It
 * re-issues a call whose response stream broke (a new JSON-RPC id, the same arguments; MCP carries
 * no key, so it sends none) up to twice, as the spec tells clients to; the model then reads the
 * last error text. No ledger: a re-issue after a lost reply charges again.
 */
export class McpDirectPolicy implements Policy {
  readonly name = 'mcp-direct';
  readonly obeysUnknown = false;
  readonly durableJournal = false;
  readonly link: McpLink;

  constructor(upstream: BenchUpstreamMcp) {
    this.link = new McpLink(() => ({ url: upstream.url, token: undefined }));
  }

  async call(call: ToolCall): Promise<Observation> {
    let last: Attempt | undefined;
    for (let reissue = 0; reissue <= MCP_DIRECT_REISSUES; reissue++) {
      if (reissue > 0) await sleep(100 * reissue, call.signal);
      last = await this.link.call(upstreamToolName(call.intent.tool), call.args, undefined, call.signal, 5_000);
      if (last.kind !== 'broken') break;
    }
    if (!last || last.kind === 'cancelled') return { kind: 'error', ambiguous: true, text: 'the tools/call was cancelled before an answer came back' };
    if (last.kind === 'broken') return { kind: 'error', ambiguous: true, text: `the response stream broke: ${last.error}` };
    const result = last.result;
    const body = (result.structuredContent ?? {}) as { status?: number; receipt?: string };
    if (!result.isError) return { kind: 'done', text: text(result), ...(body.receipt ? { receipt: body.receipt } : {}) };
    const status = body.status ?? 0;
    // The provider's own words: 5xx, 408/409/429 may have happened; "could not connect" did not.
    return { kind: 'error', ambiguous: status >= 500 || [408, 409, 429].includes(status), text: text(result) };
  }
}
