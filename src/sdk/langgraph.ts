// `@effectd/sdk/langgraph`: effectd's tools for LangGraph.js (`@langchain/langgraph` and `@langchain/core`, optional peer dependencies).
import { DynamicStructuredTool, type ToolRunnableConfig } from '@langchain/core/tools';
import { getCurrentTaskInput } from '@langchain/langgraph';
import { EffectdError } from '../core/errors.js';
import { modelToolName, selectTools } from './catalog.js';
import { CallPositions } from './frameworks/call-positions.js';
import { submitForModel } from './frameworks/tool-answer.js';
import type { HttpEffectClient } from './http-effect-client.js';
import { stepOf, type EffectIdentity } from './identity.js';

export type { ToolAnswer } from './frameworks/tool-answer.js';

export interface EffectdToolsOptions {
  /** effectd's tools to offer, by effectd's name (default: every tool of the catalog but the `read` ones). */
  tools?: readonly string[];
}

/** A message of the graph's state as far as the identity needs it: an AI message's tool calls. */
interface StateMessage {
  tool_calls?: { id?: string }[];
}

/**
 * effectd's catalog as LangChain tools for a LangGraph graph (a `ToolNode`, `createReactAgent`,
 * `createAgent`): each tool's schema is effectd's (`GET /v1/tools`), its name the model-safe form of
 * effectd's (`payments.charge` → `payments_charge`), and each call is submitted to effectd with the
 * identity the checkpointer already keeps: `configurable.thread_id` as the workflow, and as the step
 * the position of the AI message that made the call in the thread's `messages` and the index of the
 * call in its `tool_calls` (`call-<position>.<index>`) — what a run resumed from its checkpoint
 * (`graph.invoke(null, { configurable: { thread_id } })`) replays unchanged. The tool's result is
 * effectd's answer as JSON text (`status`, `message`, …), never a thrown error: `unknown` reaches
 * the model as a successful ToolMessage that says "unknown: … Do not start another …".
 */
export async function effectdTools(client: HttpEffectClient, options: EffectdToolsOptions = {}): Promise<DynamicStructuredTool[]> {
  const positions = new CallPositions();
  return selectTools(await client.tools(), options.tools).map((entry) => new DynamicStructuredTool({
    name: modelToolName(entry.name),
    description: entry.description,
    schema: entry.argsSchema,
    func: async (args: Record<string, unknown>, _run, config?: ToolRunnableConfig) => {
      const answer = await submitForModel(client, { ...langGraphIdentity(config ?? {}, positions), tool: entry.name, args });
      return JSON.stringify(answer);
    },
  }));
}

/**
 * The effect's identity of a tool call in a LangGraph run. Without a `messages` state holding the
 * call (a graph of another shape), the position is the superstep (`metadata.langgraph_step`), which
 * a resumed run also replays, and the call's index is the order of the task's calls.
 */
export function langGraphIdentity(config: ToolRunnableConfig, positions = new CallPositions()): EffectIdentity {
  const threadId: unknown = config.configurable?.thread_id;
  if (typeof threadId !== 'string' || threadId === '') {
    throw new EffectdError('invalid_command', 'a LangGraph tool behind effectd runs in a thread: compile the graph with a checkpointer and invoke it with { configurable: { thread_id } } (the workflow of its effects)', { field: 'thread_id' });
  }
  const toolCallId = config.toolCall?.id ?? '';
  const input = taskInput(config);
  const messages = Array.isArray(input?.messages) ? (input.messages as StateMessage[]) : [];
  const position = messages.findIndex((m) => m.tool_calls?.some((c) => c.id === toolCallId));
  if (toolCallId && position >= 0) return stepOf({ threadId, position, call: messages[position]!.tool_calls!.findIndex((c) => c.id === toolCallId) });
  const step = config.metadata?.langgraph_step;
  if (typeof step !== 'number' || !input) throw new EffectdError('invalid_command', 'a LangGraph tool behind effectd runs inside a graph (its node\'s state holds the AI message that called it, or its metadata the superstep)', { field: 'langgraph_step' });
  return stepOf({ threadId, position: step, call: positions.indexOf(input, toolCallId) });
}

/** The input of the graph's task running the tool (one object for every call the task makes), or undefined outside a graph. */
function taskInput(config: ToolRunnableConfig): { messages?: unknown } | undefined {
  try {
    const input = getCurrentTaskInput<{ messages?: unknown } | undefined>(config);
    return typeof input === 'object' && input !== null ? input : undefined;
  } catch {
    // Not inside a graph's task: no state to read.
    return undefined;
  }
}
