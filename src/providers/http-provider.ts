import type { CanonicalArgs } from '../core/arg-fields.js';
import { readPath } from '../core/classify.js';
import type { DispatchResult } from '../core/dispatch-result.js';
import { httpExchange, type HttpRequest } from './http-exchange.js';
import { fillJson, fillString, type TemplateContext } from './templates.js';
import { isMcpProvider, type HttpProviderSpec } from '../config/tool-contract.js';
import type { Tool } from './tool-registry.js';
import { EffectdError } from '../core/errors.js';

/**
 * What went over the wire for an effect, minus the provider's base URL and headers (credentials
 * and the key header are added at send time): recorded at the first claim, so a same-key resend
 * sends exactly the first request even after the contract changed (a rolling deploy, a config
 * edit), which is what a provider that checks parameters under a key requires.
 */
export interface SentRequest {
  method: string;
  path: string;
  body: string;
  encoding: 'json' | 'form';
  /** The header the key went in (a config edit may rename it; the provider knows the key under the old one). */
  keyHeader?: string;
}

/** What one dispatch needs beyond the tool: the effect's canonical args, its key and reference, and the request to resend, if any. */
export interface DispatchInput {
  args: CanonicalArgs;
  providerKey: string | null;
  reference: string;
  timeoutMs?: number;
  /** The first attempt's request: a resend sends this, not a request rebuilt from today's contract. */
  request?: SentRequest;
}

/** The request the contract makes of these args, key and reference today. */
export function renderRequest(tool: Tool, input: DispatchInput): SentRequest {
  const { spec, provider } = tool;
  if (!spec.request) throw new EffectdError('internal', `effectd: tool ${tool.name} has no HTTP request (a tool of an upstream MCP server goes through the MCP provider)`);
  const context: TemplateContext = { args: input.args, provider: provider.values, key: input.providerKey, ref: input.reference };
  const filled = (spec.request.body ? fillJson(spec.request.body, context) : { ...input.args }) as Record<string, unknown>;
  // Stamping the reference and the key writes into the body: copied first when it may hold an
  // argument's own object or array (placeholders name declared arguments: with none of them an
  // object, every object in the body is one fillJson made for it, and a copy would change nothing).
  const body = holdsObjects(input.args) ? structuredClone(filled) : filled;
  stampReference(tool, body, input.reference);
  if (spec.idempotency.kind === 'body-field' && input.providerKey) body[spec.idempotency.field] = input.providerKey;
  const encoding = spec.request.encoding;
  const keyHeader = spec.idempotency.kind === 'header' && input.providerKey ? spec.idempotency.header.toLowerCase() : undefined;
  return { method: spec.request.method, path: fillString(spec.request.path, context, true), body: encoding === 'form' ? formEncode(body) : JSON.stringify(body), encoding, ...(keyHeader ? { keyHeader } : {}) };
}

/** The generic HTTP adapter: the recorded (or else today's) request, with the provider's headers and the key. */
export function buildRequest(tool: Tool, input: DispatchInput): HttpRequest {
  const { spec } = tool;
  const provider = httpProvider(tool);
  const request = input.request ?? renderRequest(tool, input);
  // Object.assign, not a spread: a spread adding members costs microseconds on Node 20 (see settle in src/core/fold.ts).
  const headers: Record<string, string> = Object.assign({}, provider.headers, { accept: 'application/json' });
  const keyHeader = input.request ? input.request.keyHeader : spec.idempotency.kind === 'header' ? spec.idempotency.header.toLowerCase() : undefined;
  if (keyHeader && input.providerKey) headers[keyHeader] = input.providerKey;
  headers['content-type'] = request.encoding === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
  return { method: request.method, url: joinUrl(provider.baseUrl, request.path), headers, body: request.body, timeoutMs: input.timeoutMs ?? spec.timeoutMs };
}

export function dispatch(tool: Tool, input: DispatchInput): Promise<DispatchResult> {
  return httpExchange(buildRequest(tool, input));
}

export type LookupResult =
  /** Receipts of every match, best first. */
  | { kind: 'found'; receipts: string[]; asked: string; seen: string }
  | { kind: 'not-found'; asked: string; seen: string }
  | { kind: 'error'; asked: string; seen: string }
  | { kind: 'unsupported' };

/** Asks the provider whether the effect exists, by key or by the stamped reference, per the contract. */
export async function lookup(tool: Tool, input: DispatchInput): Promise<LookupResult> {
  const { spec } = tool;
  const provider = httpProvider(tool);
  if (spec.lookup.by === 'none') return { kind: 'unsupported' };
  const context: TemplateContext = { args: input.args, provider: provider.values, key: input.providerKey, ref: input.reference };
  const url = joinUrl(provider.baseUrl, fillString(spec.lookup.path, context, true));
  const asked = `GET ${url}`;
  const result = await httpExchange({ method: 'GET', url, headers: { ...provider.headers, accept: 'application/json' }, timeoutMs: input.timeoutMs ?? spec.timeoutMs });
  if (result.kind !== 'response') return { kind: 'error', asked, seen: result.error };
  if (result.status < 200 || result.status >= 300) return { kind: 'error', asked, seen: `HTTP ${result.status}` };
  const matches = readPath(result.body, spec.lookup.resultsPath);
  if (!Array.isArray(matches)) return { kind: 'error', asked, seen: `no array at ${spec.lookup.resultsPath}` };
  if (matches.length === 0) return { kind: 'not-found', asked, seen: '0 matches' };
  const receiptPath = spec.lookup.receiptPath;
  const receipts = matches.map((match) => {
    const receipt = receiptPath ? readPath(match, receiptPath) : undefined;
    return receipt === undefined ? `ref:${input.reference}` : String(receipt);
  });
  return { kind: 'found', receipts, asked, seen: `${matches.length} match(es)` };
}

function httpProvider(tool: Tool): HttpProviderSpec {
  if (isMcpProvider(tool.provider)) throw new EffectdError('internal', `effectd: tool ${tool.name} is a tool of an upstream MCP server, not of an HTTP provider`);
  return tool.provider;
}

function stampReference(tool: Tool, body: Record<string, unknown>, reference: string): void {
  const spec = tool.spec.reference;
  if (spec.kind === 'body-path') {
    const parts = spec.path.split('.');
    let node = body;
    for (const part of parts.slice(0, -1)) {
      if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[parts[parts.length - 1]!] = reference;
  } else if (spec.kind === 'append') {
    body[spec.field] = `${String(body[spec.field] ?? '')}${spec.format.replaceAll('{ref}', reference)}`;
  }
}

function holdsObjects(args: CanonicalArgs): boolean {
  for (const value of Object.values(args)) if (value !== null && typeof value === 'object') return true;
  return false;
}

function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

function formEncode(body: Record<string, unknown>, prefix = '', out = new URLSearchParams()): string {
  for (const [key, value] of Object.entries(body)) {
    const name = prefix ? `${prefix}[${key}]` : key;
    if (value !== null && typeof value === 'object') formEncode(value as Record<string, unknown>, name, out);
    else if (value !== undefined) out.append(name, String(value));
  }
  return out.toString();
}
