// `@effectd/sdk/ai`: effectd's tools for the Vercel AI SDK (`ai`, an optional peer dependency).
import { jsonSchema, tool, type ModelMessage, type ToolSet } from 'ai';
import { modelToolName, selectTools } from './catalog.js';
import { CallPositions } from './frameworks/call-positions.js';
import { submitForModel, type ToolAnswer } from './frameworks/tool-answer.js';
import type { HttpEffectClient } from './http-effect-client.js';
import { stepOf, type EffectIdentity } from './identity.js';

export type { ToolAnswer } from './frameworks/tool-answer.js';

export interface EffectdToolsOptions {
  /** The conversation's id, persisted with its messages (the AI SDK chat id): the same when a killed agent is resumed. */
  workflowId: string;
  /** effectd's tools to offer, by effectd's name (default: every tool of the catalog but the `read` ones). */
  tools?: readonly string[];
}

/**
 * effectd's catalog as an AI SDK ToolSet, for `generateText` / `streamText` / an Agent. Each tool's
 * input schema is effectd's (`GET /v1/tools`), its name the model-safe form of effectd's
 * (`payments.charge` → `payments_charge`), and its `execute` submits the call to effectd with the
 * identity the conversation already has: the chat id as the workflow, and as the step the call's
 * position in the conversation (`options.messages.length`, the messages before the model's response
 * that made the call, and the index of the call in that response) — the same when a killed agent is
 * resumed from its persisted messages (`[...messages, ...response.messages]`, stored after every
 * step), different for a deliberate new call later in the conversation. The result is a
 * {@link ToolAnswer}, never a thrown error: `unknown` reaches the model as a result that says
 * "unknown: … Do not start another …".
 */
export async function effectdTools(client: HttpEffectClient, options: EffectdToolsOptions): Promise<ToolSet> {
  const positions = new CallPositions();
  const tools: ToolSet = {};
  for (const entry of selectTools(await client.tools(), options.tools)) {
    tools[modelToolName(entry.name)] = tool<Record<string, unknown>, ToolAnswer>({
      description: entry.description,
      inputSchema: jsonSchema<Record<string, unknown>>(entry.argsSchema),
      execute: (args, { messages, toolCallId }) => submitForModel(client, { ...aiSdkIdentity(options.workflowId, messages, positions.indexOf(messages, toolCallId)), tool: entry.name, args }),
    });
  }
  return tools;
}

/** The effect's identity of an AI SDK tool call: `call-<messages before the model's response>.<index of the call in it>`. */
export function aiSdkIdentity(workflowId: string, messages: readonly ModelMessage[], call: number): EffectIdentity {
  return stepOf({ threadId: workflowId, position: messages.length, call });
}
