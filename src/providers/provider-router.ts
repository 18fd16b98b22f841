import type { DispatchResult } from '../core/dispatch-result.js';
import { dispatch as httpDispatch, lookup as httpLookup, renderRequest as renderHttpRequest, type DispatchInput, type LookupResult, type SentRequest } from './http-provider.js';
import { dispatchMcp, lookupMcp, renderMcpRequest } from './mcp-provider.js';
import type { Tool } from './tool-registry.js';

export type { DispatchInput, LookupResult, SentRequest } from './http-provider.js';

/**
 * Dispatch, lookup and the recorded request, by the kind of the tool's provider: an HTTP
 * provider (`baseUrl`) or an upstream MCP server (`mcp`). The shell's defaults.
 */
const viaMcp = (tool: Tool): boolean => tool.spec.mcp !== undefined;

export function dispatch(tool: Tool, input: DispatchInput): Promise<DispatchResult> {
  return viaMcp(tool) ? dispatchMcp(tool, input) : httpDispatch(tool, input);
}

export function lookup(tool: Tool, input: DispatchInput): Promise<LookupResult> {
  return viaMcp(tool) ? lookupMcp(tool, input) : httpLookup(tool, input);
}

export function renderRequest(tool: Tool, input: DispatchInput): SentRequest {
  return viaMcp(tool) ? renderMcpRequest(tool, input) : renderHttpRequest(tool, input);
}
