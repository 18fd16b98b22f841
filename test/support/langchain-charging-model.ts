// A scripted LangChain chat model (a BaseChatModel, as LangGraph's own tests script theirs) that
// decides as a model would: while no tool result follows the last human message, it calls the
// charging tool (under a tool-call id it mints per answer); then it answers with text.
import { randomBytes } from 'node:crypto';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

export class ChargingChatModel extends BaseChatModel {
  constructor(private readonly toolName: string, private readonly args: () => Record<string, unknown>) {
    super({});
  }

  _llmType(): string {
    return 'effectd-scripted-charging';
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages.at(-1);
    const message = last?.getType() === 'tool'
      ? new AIMessage(`finished: ${String(last.content)}`)
      : new AIMessage({ content: '', tool_calls: [{ id: `call_${randomBytes(9).toString('base64url')}`, name: this.toolName, args: this.args(), type: 'tool_call' }] });
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}
