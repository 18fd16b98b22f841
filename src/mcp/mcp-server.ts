import { McpServer, type CallToolResult, type StandardSchemaWithJSON, type ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { identifierField, workflowIdField } from '../core/effect-command.js';
import { EffectdError } from '../core/errors.js';
import type { SagaDefinition } from '../core/saga/saga-definition.js';
import type { Caller } from '../gateway/caller.js';
import { sagaInputJsonSchema } from '../gateway/views/saga-catalog.js';
import type { Tool } from '../gateway/views/tool-catalog.js';
import { toolArgsJsonSchema } from '../gateway/views/tool-args-schema.js';
import type { EffectdRuntime } from '../runtime/effectd-runtime.js';
import { errorResult } from './error-result.js';
import { CONTENT_FALLBACK_RISK, IDENTITY_HELP, META, identityFrom, requireIdentity, slidWindow, threadFrom, withFallback, type FallbackInput, type IdentityFallback, type IdentitySource } from './identity.js';
import { takeRepeat, withRepeatArgument } from './repeat-argument.js';
import { HISTORY_TOOL, STATUS_TOOL, mcpSagaName, mcpToolName } from './names.js';
import { historySchema, outcomeResult, outcomeSchema, statusSchema } from './results.js';
import { offerTask, registerTaskMethods } from './task-methods.js';
import { waitFrom } from './wait.js';
import { withTraceFrom } from '../tracing/index.js';
import { relayFor } from './upstream-relay.js';

/** What the MCP front door needs of a runtime: the gateway and the catalogue of tools and sagas. */
export type McpRuntime = Pick<EffectdRuntime, 'gateway' | 'tools' | 'sagas' | 'metrics'>;

const VERSION = '0.1.0';

const INSTRUCTIONS = `effectd makes every tool call here an effect that happens at most once. Each call's identity comes from the harness in params._meta, not from arguments: ${IDENTITY_HELP} Results have three states: done (receipt), not_done (isError; safe to try again as a new step), unknown (being checked: do not start another; ask ${STATUS_TOOL} with the reference). A call refused as sent (isError, text starting "refused:") did nothing; it is no outcome of the effect, and it says where the recorded effect stands. ${HISTORY_TOOL} tells what the workflow's earlier steps came to, from the ledger.`;

/** Said to clients that send no _meta, where effectd derives identity from content (the default). */
const CONTENT_INSTRUCTIONS = `A call without that _meta is identified by its content: sending the same call again (same tool, same arguments) is the same effect, answered from the ledger, never done twice — so after a lost or unclear answer, send it again as it was. To do the very same call again on purpose, as another effect, set the tool's effectd_repeat argument to why (different for each repeat).`;

/**
 * Annotations that tell the truth from the contract (clients must treat them as hints, and effectd
 * never relies on them): `read` is read-only; `irreversible` and `idempotent` (an idempotent tool
 * such as terminating an instance can still destroy) are destructive, a `compensable` one is not
 * (its contract names the undo); idempotent only where the contract guarantees that the same
 * arguments have no further effect (`read`, `idempotent`). Providers are an open world.
 */
export function contractAnnotations(tool: Tool): ToolAnnotations {
  const r = tool.spec.reversibility;
  if (r === 'read') return { title: tool.name, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
  return { title: tool.name, readOnlyHint: false, destructiveHint: r !== 'compensable', idempotentHint: r === 'idempotent', openWorldHint: true };
}

/** A saga destroys when one of its steps does; it is never idempotent by its arguments alone. */
function sagaAnnotations(saga: SagaDefinition<any>): ToolAnnotations {
  return { title: `saga ${saga.name}`, readOnlyHint: false, destructiveHint: saga.steps.some((s) => s.reversibility === 'irreversible' || s.reversibility === 'idempotent'), idempotentHint: false, openWorldHint: true };
}

/**
 * A JSON Schema handed to the SDK as is, with no validation of its own: effectd's gateway validates
 * and canonicalizes the arguments with the contract's zod schema and answers each bad field by its
 * path, as it does over HTTP and Kafka.
 */
function advertised(json: Record<string, unknown>): StandardSchemaWithJSON<Record<string, unknown>, Record<string, unknown>> {
  return {
    '~standard': {
      version: 1,
      vendor: 'effectd',
      validate: (value: unknown) => ({ value: (value ?? {}) as Record<string, unknown> }),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/** What a result tells the model about the tool call, answered even when the gateway throws. */
async function answered(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    return errorResult(error);
  }
}

/**
 * An answer whose identity the operator's fallback supplied says so: where it came from, the
 * workflow and step it named, and (content) the false-dedup risk.
 */
function identified(result: CallToolResult, source: IdentitySource, command: Record<string, unknown>): CallToolResult {
  if (source === 'meta') return result;
  const note = source === 'header'
    ? `(identity from the HTTP headers: workflow ${String(command.workflowId)}, step ${String(command.step)})`
    : `(no _meta identity, so derived from the call's content: ${CONTENT_FALLBACK_RISK})`;
  const content = (result.content ?? []).map((c, i) => (i === 0 && c.type === 'text' ? { ...c, text: `${c.text} ${note}` } : c));
  return { ...result, content, structuredContent: { ...(result.structuredContent as Record<string, unknown> | undefined), identity: { source, workflowId: command.workflowId, step: command.step, ...(source === 'content' ? { risk: CONTENT_FALLBACK_RISK } : {}) } } };
}

/**
 * One MCP server for one caller (the SDK builds one per HTTP request, one per stdio connection):
 * every configured tool, every registered saga, and effectd's read tools, all through the gateway.
 * A cancelled call (closed stream, notifications/cancelled) does not cancel the effect: the
 * gateway's submission runs to its recorded outcome, and the next call for it is answered from it.
 */
export interface McpServerOptions {
  /** The operator's fallback identity for plain clients (`--mcp-identity-fallback`); off when absent. */
  identityFallback?: IdentityFallback;
  /** What the transport read for it (the configured headers of this HTTP request). */
  fallbackInput?: FallbackInput;
  /** The trace context the transport carried (the HTTP request's traceparent, tracestate): a call's `_meta` with a traceparent wins. */
  transportTrace?: Record<string, string>;
}

export function buildMcpServer(runtime: McpRuntime, caller: Caller, options: McpServerOptions = {}): McpServer {
  const repeatable = options.identityFallback?.mode === 'content';
  const server = new McpServer({ name: 'effectd', version: VERSION }, { instructions: repeatable ? `${INSTRUCTIONS} ${CONTENT_INSTRUCTIONS}` : INSTRUCTIONS });
  const { gateway } = runtime;
  // The Tasks extension (src/mcp/task-methods.ts): tasks/* methods, and an unknown answer as a task for clients that declare it.
  const tasks = { gateway, caller, now: () => Date.now() };
  registerTaskMethods(server, tasks);
  const submit = async (command: Record<string, unknown>, source: IdentitySource = 'meta', waitMs?: number, meta?: unknown, envelope?: unknown) => {
    runtime.metrics.commandReceived('mcp');
    // The caller's trace context travels in params._meta (traceparent, tracestate), else in the HTTP request's headers.
    const carrier = (meta as { traceparent?: unknown } | undefined)?.traceparent !== undefined ? meta : options.transportTrace;
    const submitted = await withTraceFrom(carrier, () => gateway.submit(caller, command, waitMs !== undefined ? { waitMs } : {}));
    return offerTask(tasks, envelope, submitted, identified(outcomeResult(submitted.outcome), source, command));
  };
  /** Whether (workflow, step) is in the ledger: what the content fallback's sliding window asks (the cached fold, no stream read). */
  const declared = async (workflowId: string, step: string) => {
    const steps = await gateway.history(caller, workflowId).then((h) => h.steps, () => []);
    return steps.some((s) => s.step === step && s.outcomes.length > 0);
  };
  /** The identity of a call: `_meta`, else the fallback; and its arguments without the repeat argument (src/mcp/repeat-argument.ts). */
  const effectIdentity = async (meta: unknown, tool: string, given: unknown) => {
    const { args, repeat } = options.identityFallback?.mode === 'content' ? takeRepeat(given) : { args: given };
    const thread = threadFrom(meta as Record<string, unknown> | undefined);
    const call = { credential: caller.name, tool, args, now: Date.now(), ...(repeat !== undefined ? { repeat } : {}), ...(thread !== undefined ? { thread } : {}) };
    const filled = await slidWindow(withFallback(meta as Record<string, unknown> | undefined, options.identityFallback, options.fallbackInput ?? {}, call), options.identityFallback, call, declared);
    return { identity: identityFrom(filled.meta), source: filled.source, args };
  };

  for (const tool of runtime.tools.list()) {
    relayFor(server, tool).registerTool(mcpToolName(tool.name), {
      title: tool.name,
      description: `${tool.spec.description || tool.name} (effectd tool ${tool.name}, ${tool.spec.reversibility}; its identity: _meta "${META.workflowId}" and "${META.step}" from the harness${repeatable ? ', else the call\'s content: the same call again is the same effect unless effectd_repeat says why it is another' : ''})`,
      inputSchema: advertised(repeatable ? withRepeatArgument(toolArgsJsonSchema(tool)) : toolArgsJsonSchema(tool)),
      outputSchema: outcomeSchema,
      annotations: contractAnnotations(tool),
      _meta: { 'dev.effectd/tool': tool.name, 'dev.effectd/reversibility': tool.spec.reversibility },
    }, (given, ctx) => answered(async () => {
      const { identity, source, args } = await effectIdentity(ctx.mcpReq._meta, tool.name, given);
      const { workflowId, step } = requireIdentity(identity, tool.name, true, options.identityFallback, tool.spec.reversibility);
      return submit({
        workflowId, step, tool: tool.name, args,
        ...(identity.slot !== undefined ? { slot: identity.slot } : {}),
        ...(identity.tenant !== undefined ? { tenant: identity.tenant } : {}),
        ...(identity.principal !== undefined ? { principal: identity.principal } : {}),
        ...(identity.repeat !== undefined ? { repeat: identity.repeat } : {}),
      }, source, waitFrom(ctx.mcpReq._meta), ctx.mcpReq._meta, ctx.mcpReq.envelope);
    }));
  }

  for (const name of runtime.sagas.names()) {
    const saga = runtime.sagas.get(name)!;
    server.registerTool(mcpSagaName(name), {
      title: `saga ${name}`,
      description: `${saga.description} (effectd saga ${name}: steps ${saga.steps.map((s) => `${s.name} (${s.tool}, ${s.reversibility})`).join(', ')}; needs _meta "${META.workflowId}" from the harness, one saga per workflow)`,
      inputSchema: advertised(sagaInputJsonSchema(saga)),
      outputSchema: outcomeSchema,
      annotations: sagaAnnotations(saga),
      _meta: { 'dev.effectd/tool': `saga:${name}` },
    }, (args, ctx) => answered(async () => {
      const { identity, source } = await effectIdentity(ctx.mcpReq._meta, `saga:${name}`, args);
      const { workflowId } = requireIdentity(identity, `saga ${name}`, false, options.identityFallback);
      return submit({ workflowId, step: 'saga', tool: `saga:${name}`, args, ...(identity.tenant !== undefined ? { tenant: identity.tenant } : {}) }, source, undefined, ctx.mcpReq._meta, ctx.mcpReq.envelope);
    }));
  }

  server.registerTool(STATUS_TOOL, {
    title: 'effect status',
    description: 'The status of an effect by its reference (the effectId or reference of an earlier answer): done with its receipt, not_done, or unknown and what is being checked, with the ledger\'s evidence. Read-only: it never calls a provider.',
    inputSchema: z.object({ reference: identifierField('reference').describe('the reference (effectId) of an earlier answer') }),
    outputSchema: statusSchema,
    annotations: { title: 'effect status', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, ({ reference }) => answered(async () => {
    const effect = await gateway.effect(caller, reference);
    const { args: _args, ...view } = effect;
    return { isError: false, content: [{ type: 'text', text: view.message }], structuredContent: view };
  }));

  server.registerTool(HISTORY_TOOL, {
    title: 'workflow history',
    description: `What each earlier step of the workflow came to, from effectd's ledger (facts, not memory): the decision and each effect's outcome. The workflow is _meta "${META.workflowId}" unless workflowId is given. Read-only.`,
    inputSchema: z.object({ workflowId: workflowIdField.optional().describe(`the workflow (default: _meta "${META.workflowId}")`) }),
    outputSchema: historySchema,
    annotations: { title: 'workflow history', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, ({ workflowId }, ctx) => answered(async () => {
    const identity = identityFrom(ctx.mcpReq._meta as Record<string, unknown> | undefined);
    const id = workflowId ?? identity.workflowId;
    if (id === undefined) return errorResult(new EffectdError('invalid_command', `which workflow? give workflowId or send _meta "${META.workflowId}"`, { fields: [{ path: 'workflowId', message: 'required' }] }));
    const history = await gateway.history(caller, id, identity.tenant);
    const lines = history.steps.map((s) => `step ${s.step}: ${s.outcomes.map((o) => (o as { message: string }).message).join(' ') || `decided ${s.decision?.tool ?? ''}, not executed`}`);
    return { isError: false, content: [{ type: 'text', text: lines.length ? lines.join('\n') : `workflow ${id} has no steps yet` }], structuredContent: history };
  }));

  return server;
}
