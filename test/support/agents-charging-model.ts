// A scripted model for the OpenAI Agents SDK (its Model interface, as the SDK's own tests script
// theirs) that decides as a model would: while no tool output follows the last user message, it
// calls the charging tool (under a call id it mints per answer); then it answers with text. It keeps
// every request, so a test can read what the model was shown.
import { randomBytes } from 'node:crypto';
import { Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse, type StreamEvent } from '@openai/agents';

export class ChargingAgentsModel implements Model {
  readonly requests: ModelRequest[] = [];

  constructor(private readonly toolName: string, private readonly args: () => Record<string, unknown>) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const items: AgentInputItem[] = Array.isArray(request.input) ? request.input : [{ role: 'user', content: request.input }];
    const lastUser = items.findLastIndex((item) => 'role' in item && item.role === 'user');
    const result = items.slice(lastUser).findLast((item) => item.type === 'function_call_result');
    return {
      usage: new Usage(),
      output: result
        ? [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `finished: ${shown(result.output)}` }] }]
        : [{ type: 'function_call', callId: `call_${randomBytes(9).toString('base64url')}`, name: this.toolName, arguments: JSON.stringify(this.args()), status: 'completed' }],
    };
  }

  // eslint-disable-next-line require-yield -- never streamed: the tests run the agent with run(), not stream
  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error('ChargingAgentsModel does not stream');
  }
}

/** A tool output as the model reads it: its text. */
function shown(output: unknown): string {
  if (typeof output === 'string') return output;
  const text = (output as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? text : JSON.stringify(output);
}
