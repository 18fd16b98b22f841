// `@effectd/sdk/openai-agents`: effectd's tools for the OpenAI Agents SDK for JavaScript (`@openai/agents`, an optional peer dependency).
import { tool, type FunctionTool, type JsonSchemaDefinition, type RunContext, type Session } from '@openai/agents';
import { modelToolName, selectTools } from './catalog.js';
import { CallPositions } from './frameworks/call-positions.js';
import { submitForModel, type ToolAnswer } from './frameworks/tool-answer.js';
import type { HttpEffectClient } from './http-effect-client.js';
import { stepOf, type EffectIdentity } from './identity.js';

export type { ToolAnswer } from './frameworks/tool-answer.js';

/** A tool's parameters as JSON Schema, as the Agents SDK types them. */
type ParametersSchema = Extract<JsonSchemaDefinition['schema'], { additionalProperties: true }>;

export interface EffectdToolsOptions {
  /**
   * The session the agent runs with (`run(agent, input, { session })`): its id is the workflow, and
   * the items it holds when a run starts say where the run's calls are in the conversation. A
   * server-managed conversation is a session too (`OpenAIConversationsSession`, id `conv_…`).
   */
  session: Session;
  /** effectd's tools to offer, by effectd's name (default: every tool of the catalog but the `read` ones). */
  tools?: readonly string[];
}

/**
 * effectd's catalog as OpenAI Agents SDK function tools (`new Agent({ tools })`): each tool's
 * parameters are effectd's JSON Schema (`GET /v1/tools`, non-strict), its name the model-safe form
 * of effectd's (`payments.charge` → `payments_charge`), and each call is submitted to effectd with
 * the identity the session already has: its id as the workflow, and as the step the place of the
 * run in the session (the items the session held when the run made its first call) and the index
 * of the call in the run (`call-<items>.<index>`). The SDK saves a run's items to the session when
 * the run ends, so an agent killed in a tool call and run again with the same input is the same
 * effect, and the next run of the conversation (the session has grown) is a new one. The result is
 * effectd's answer (`status`, `message`, …), never a thrown error: `unknown` reaches the model as
 * an ordinary tool output that says "unknown: … Do not start another …".
 */
export async function effectdTools(client: HttpEffectClient, options: EffectdToolsOptions): Promise<FunctionTool<unknown, ParametersSchema, ToolAnswer>[]> {
  const runs = new RunPositions(options.session);
  return selectTools(await client.tools(), options.tools).map((entry) => tool({
    name: modelToolName(entry.name),
    description: entry.description,
    // Non-strict, with effectd's schema as it is (additionalProperties: false kept; the SDK's type says true): effectd checks the arguments.
    parameters: entry.argsSchema as ParametersSchema,
    strict: false,
    execute: async (args, runContext, details): Promise<ToolAnswer> => {
      const identity = await runs.identity(runContext, details?.toolCall?.callId ?? '');
      return submitForModel(client, { ...identity, tool: entry.name, args: args as Record<string, unknown> });
    },
  }));
}

/** Where each run sits in its session: the session's item count at the run's first call, and the order of the run's calls. */
class RunPositions {
  private readonly runs = new WeakMap<object, Promise<{ workflowId: string; position: number }>>();
  private readonly calls = new CallPositions();
  /** A call made outside a run (no run context): its own scope. */
  private readonly noRun = {};

  constructor(private readonly session: Session) {}

  async identity(runContext: RunContext<unknown> | undefined, callId: string): Promise<EffectIdentity> {
    const key: object = runContext ?? this.noRun;
    let run = this.runs.get(key);
    if (!run) {
      run = Promise.all([this.session.getSessionId(), this.session.getItems()]).then(([workflowId, items]) => ({ workflowId, position: items.length }));
      this.runs.set(key, run);
    }
    const { workflowId, position } = await run;
    return agentsIdentity(workflowId, position, this.calls.indexOf(key, callId));
  }
}

/** The effect's identity of an Agents SDK tool call: the session's id, `call-<session items when the run began>.<index of the call in the run>`. */
export function agentsIdentity(sessionId: string, position: number, call: number): EffectIdentity {
  return stepOf({ threadId: sessionId, position, call });
}
