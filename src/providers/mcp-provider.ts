import { Client, ProtocolError, SdkError, SdkErrorCode, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readPath } from '../core/classify.js';
import type { DispatchResult } from '../core/dispatch-result.js';
import type { DispatchInput, LookupResult, SentRequest } from './http-provider.js';
import { injectTrace } from '../tracing/index.js';
import { fillJson, type TemplateContext } from './templates.js';
import { isMcpProvider, type McpCallSpec, type McpProviderSpec } from '../config/tool-contract.js';
import type { Tool } from './tool-registry.js';
import { EffectdError } from '../core/errors.js';
import { callObserver } from '../shared/call-observer.js';

/**
 * Upstream MCP servers as providers (docs/design.md, "One gateway, three front doors"): a contract's
 * tool is a `tools/call` of an upstream tool, with the provider key in `_meta`
 * (`dev.effectd/idempotencyKey`) and, where the contract says so, in a named argument; the
 * effect's reference stamped into a named argument; reconciliation through a declared read-only
 * upstream tool. The upstream's annotations are never read: the contract decides.
 *
 * How a call's fate maps onto what the classifier knows (each answer says in MCP's words what came
 * back, `said`, so a reason never calls an MCP answer an HTTP status):
 * - a result → `response` 200 (committed, the receipt at `mcp.receiptPath`);
 * - a result with `isError: true` → `response` 400 (a refusal: failed_before_effect, unless the
 *   contract's `classify` maps status 400, optionally with `bodyIncludes`, to something else);
 * - a JSON-RPC error that proves the tool did not run (invalid params, unknown method or tool,
 *   a parse error) → 400; any other JSON-RPC error → 502 (the outcome stays open: unknown);
 * - a timeout, a dropped stream or connection, a child that died mid-call → `lost` (unknown → reconcile);
 * - no connection at all (refused, the child would not start, initialize failed) → `not-sent`.
 */

export const IDEMPOTENCY_KEY_META = 'dev.effectd/idempotencyKey';
export const REFERENCE_META = 'dev.effectd/reference';

/** How long connecting (and initialize) may take before the call counts as never sent. */
const CONNECT_TIMEOUT_MS = 10_000;

interface Upstream {
  client: Client;
  closed: boolean;
}

/** One client per upstream, reused across calls; dropped when its transport closes, so the next call reconnects. */
const upstreams = new Map<string, Promise<Upstream>>();

function upstreamKey(name: string, spec: McpProviderSpec): string {
  return `${name}\u0000${JSON.stringify(spec.mcp)}`;
}

async function connectUpstream(key: string, spec: McpProviderSpec): Promise<Upstream> {
  const client = new Client({ name: 'effectd', version: '1' });
  const transport = 'url' in spec.mcp
    ? new StreamableHTTPClientTransport(new URL(spec.mcp.url), {
      requestInit: { headers: spec.mcp.headers },
      // Exactly one layer retries: effectd. A dropped stream is a lost reply, not something to resume.
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 },
    })
    : new StdioClientTransport({ command: spec.mcp.command, args: spec.mcp.args, ...(spec.mcp.env ? { env: spec.mcp.env } : {}), ...(spec.mcp.cwd ? { cwd: spec.mcp.cwd } : {}), stderr: 'inherit' });
  const upstream: Upstream = { client, closed: false };
  client.onclose = () => {
    upstream.closed = true;
    void upstreams.get(key)?.then((u) => u === upstream && upstreams.delete(key), () => undefined);
  };
  await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
  return upstream;
}

async function upstreamFor(tool: Tool): Promise<Upstream> {
  const provider = tool.provider;
  if (!isMcpProvider(provider)) throw new EffectdError('internal', `effectd: tool ${tool.name} is not a tool of an upstream MCP server`);
  const key = upstreamKey(provider.name, provider);
  let pending = upstreams.get(key);
  if (pending) {
    const upstream = await pending.catch(() => undefined);
    if (upstream && !upstream.closed) return upstream;
    if (upstreams.get(key) === pending) upstreams.delete(key);
    pending = undefined;
  }
  pending = connectUpstream(key, provider);
  upstreams.set(key, pending);
  pending.catch(() => {
    if (upstreams.get(key) === pending) upstreams.delete(key);
  });
  return pending;
}

/** Closes every upstream client (stdio children end with their stdin). */
export async function closeUpstreams(): Promise<void> {
  const all = [...upstreams.values()];
  upstreams.clear();
  await Promise.all(all.map(async (pending) => {
    const upstream = await pending.catch(() => undefined);
    await upstream?.client.close().catch(() => undefined);
  }));
}

function mcpSpec(tool: Tool): McpCallSpec {
  if (!tool.spec.mcp) throw new EffectdError('internal', `effectd: tool ${tool.name} names no upstream MCP tool`);
  return tool.spec.mcp;
}

function context(tool: Tool, input: DispatchInput): TemplateContext {
  return { args: input.args, provider: tool.provider.values, key: input.providerKey, ref: input.reference };
}

/**
 * The `tools/call` the contract makes of these args, key and reference today, recorded at the
 * first claim (method `MCP`, path = the upstream tool, body = the JSON arguments) so a same-key
 * resend sends exactly these arguments even after the contract changed.
 */
export function renderMcpRequest(tool: Tool, input: DispatchInput): SentRequest {
  const spec = mcpSpec(tool);
  const args = structuredClone((spec.arguments ? fillJson(spec.arguments, context(tool, input)) : { ...input.args }) as Record<string, unknown>);
  if (spec.referenceArgument) setPath(args, spec.referenceArgument, input.reference);
  if (spec.keyArgument && input.providerKey) setPath(args, spec.keyArgument, input.providerKey);
  return { method: 'MCP', path: spec.tool, body: JSON.stringify(args), encoding: 'json' };
}

export async function dispatchMcp(tool: Tool, input: DispatchInput): Promise<DispatchResult> {
  const started = performance.now();
  const latencyMs = () => performance.now() - started;
  const request = input.request ?? renderMcpRequest(tool, input);
  let upstream: Upstream;
  try {
    upstream = await upstreamFor(tool);
  } catch (error) {
    // No connection, no initialize: the tools/call provably never left this process.
    return { kind: 'not-sent', error: `cannot reach the upstream MCP server of ${tool.provider.name}: ${describe(error)}`, latencyMs: latencyMs() };
  }
  const _meta: Record<string, unknown> = { [REFERENCE_META]: input.reference };
  if (input.providerKey) _meta[IDEMPOTENCY_KEY_META] = input.providerKey;
  // With traces exported: the attempt span's traceparent, where MCP carries trace context.
  injectTrace(_meta);
  const timeout = input.timeoutMs ?? tool.spec.timeoutMs;
  // The request waiting for this call sees its progress and the upstream's content (src/shared/call-observer.ts).
  const observer = callObserver();
  const onprogress = observer?.progress;
  let result: CallToolResult;
  try {
    result = await upstream.client.callTool({ name: request.path, arguments: JSON.parse(request.body) as Record<string, unknown>, _meta }, {
      timeout, maxTotalTimeout: timeout,
      ...(onprogress ? { onprogress: ({ progress, total, message }: { progress: number; total?: number; message?: string }) => onprogress({ progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) }) } : {}),
    });
  } catch (error) {
    return failure(error, `${tool.provider.name} tools/call ${request.path}`, latencyMs());
  }
  // Outside the call's try: whatever the observer does, the answer is classified as it came.
  try {
    observer?.answered?.(input.reference, result.content ?? []);
  } catch {
    /* the observer's loss, never the effect's */
  }
  const refused = result.isError === true;
  return { kind: 'response', status: refused ? 400 : 200, said: refused ? 'an isError result of the upstream MCP tool' : 'a result of the upstream MCP tool', headers: {}, body: normalize(result), latencyMs: latencyMs() };
}

/** Calls the declared read-only upstream tool with the reference (or key) and reads the matches at its results path. */
export async function lookupMcp(tool: Tool, input: DispatchInput): Promise<LookupResult> {
  const lookup = mcpSpec(tool).lookup;
  if (!lookup) return { kind: 'unsupported' };
  const args = fillJson(lookup.arguments, context(tool, input)) as Record<string, unknown>;
  const asked = `MCP tools/call ${lookup.tool} ${JSON.stringify(args)}`;
  let result: CallToolResult;
  try {
    const upstream = await upstreamFor(tool);
    const timeout = input.timeoutMs ?? tool.spec.timeoutMs;
    const _meta: Record<string, unknown> = {};
    injectTrace(_meta);
    result = await upstream.client.callTool({ name: lookup.tool, arguments: args, ...(Object.keys(_meta).length > 0 ? { _meta } : {}) }, { timeout, maxTotalTimeout: timeout });
  } catch (error) {
    return { kind: 'error', asked, seen: describe(error) };
  }
  if (result.isError === true) return { kind: 'error', asked, seen: `isError: ${textOf(result)}` };
  const matches = readPath(normalize(result), lookup.resultsPath);
  if (!Array.isArray(matches)) return { kind: 'error', asked, seen: `no array at ${lookup.resultsPath}` };
  if (matches.length === 0) return { kind: 'not-found', asked, seen: '0 matches' };
  const receipts = matches.map((match) => {
    const receipt = lookup.receiptPath ? readPath(match, lookup.receiptPath) : undefined;
    return receipt === undefined ? `ref:${input.reference}` : String(receipt);
  });
  return { kind: 'found', receipts, asked, seen: `${matches.length} match(es)` };
}

/** A tool result whose structured content came as JSON text only (many servers) gets it parsed, so receipt paths read one shape. */
function normalize(result: CallToolResult): Record<string, unknown> {
  if (result.structuredContent !== undefined) return result as Record<string, unknown>;
  const text = textOf(result);
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return { ...result, structuredContent: parsed };
  } catch {
    /* not JSON: the result as it is */
  }
  return result as Record<string, unknown>;
}

function textOf(result: CallToolResult): string {
  return (result.content ?? []).filter((c): c is { type: 'text'; text: string } => c.type === 'text').map((c) => c.text).join('\n');
}

/** JSON-RPC errors that prove the upstream did not run the tool. */
const REFUSED_CODES = new Set([-32700, -32600, -32601, -32602]);

function failure(error: unknown, call: string, latencyMs: number): DispatchResult {
  if (error instanceof ProtocolError) {
    const status = REFUSED_CODES.has(error.code) ? 400 : 502;
    return { kind: 'response', status, said: `JSON-RPC error ${error.code} from the upstream MCP server`, headers: {}, body: { jsonrpcError: { code: error.code, message: error.message, data: error.data } }, latencyMs };
  }
  const why = `${call}: ${describe(error)}`;
  if (error instanceof SdkError && error.code === SdkErrorCode.NotConnected) return { kind: 'not-sent', error: why, latencyMs };
  if (refused(error)) return { kind: 'not-sent', error: why, latencyMs };
  return { kind: 'lost', error: why, latencyMs };
}

/** A connection refused anywhere in the cause chain: the request never left. */
function refused(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === 'ECONNREFUSED') return true;
    if (e instanceof AggregateError && e.errors.some((inner) => (inner as { code?: unknown }).code === 'ECONNREFUSED')) return true;
  }
  return false;
}

function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    parts.push(e instanceof Error ? e.message : String(e));
  }
  return parts.join(': ');
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}
