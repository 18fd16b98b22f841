// @effectd/sdk/langgraph: effectd's catalog as LangChain tools in a LangGraph.js graph (a ToolNode
// behind a scripted chat model, a checkpointer) against effectd in process (HTTP on loopback). The
// identity comes from the thread and the AI message's place in it; a run resumed from its
// checkpoint is the same effect; `unknown` is a successful ToolMessage in effectd's words.
import { HumanMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import type { DynamicStructuredTool } from '@langchain/core/tools';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { afterEach, describe, expect, it } from 'vitest';
import { isEffectdError } from '../../src/core/errors.js';
import { effectdTools, langGraphIdentity, type ToolAnswer } from '../../src/sdk/langgraph.js';
import { httpMemoryApp, type HttpMemoryApp } from '../support/http-memory-app.js';
import { ChargingChatModel } from '../support/langchain-charging-model.js';

let running: HttpMemoryApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const charge = { invoiceId: 'INV-9', amount: '12.00 USD' };

/** The agent: model → tools → model, checkpointed in `saver` (what a restarted process opens again). A tool's throw ends the run when `dies`. */
function agent(tools: DynamicStructuredTool[], saver: MemorySaver, dies = false) {
  const model = new ChargingChatModel('payments_charge', () => charge);
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools, { handleToolErrors: !dies }))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver });
}

const toolMessages = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => m.getType() === 'tool');
const answerOf = (message: ToolMessage) => JSON.parse(String(message.content)) as ToolAnswer;

describe('@effectd/sdk/langgraph: effectd tools for LangGraph.js', () => {
  it('charges once; the workflow is the thread, the step the AI message\'s place in it', async () => {
    running = await httpMemoryApp();
    const tools = await effectdTools(running.client, { tools: ['payments.charge'] });
    expect(tools.map((t) => t.name)).toEqual(['payments_charge']);
    const { messages } = await agent(tools, new MemorySaver()).invoke({ messages: [new HumanMessage('Charge INV-9.')] }, { configurable: { thread_id: 'thread-1' } });
    const [result] = toolMessages(messages);
    expect(answerOf(result!)).toMatchObject({ status: 'done', receipt: expect.stringMatching(/\S/) });
    expect((await running.client.history('thread-1')).map((s) => s.step)).toEqual(['call-1.0']);
    expect(running.memory.provider.made('payments.charge')).toHaveLength(1);
  });

  it('a run killed in the tool call and resumed from its checkpoint is the same effect: one charge', async () => {
    running = await httpMemoryApp();
    const saver = new MemorySaver();
    const config = { configurable: { thread_id: 'thread-2' } };
    const [real] = await effectdTools(running.client, { tools: ['payments.charge'] });
    // The first process: effectd answers, then the process dies before LangGraph checkpoints the tools node.
    const dying = Object.assign(Object.create(real!) as DynamicStructuredTool, {
      func: async (...call: Parameters<DynamicStructuredTool['func']>) => {
        await real!.func(...call);
        throw new Error('killed after effectd answered');
      },
    });
    await expect(agent([dying], saver, true).invoke({ messages: [new HumanMessage('Charge INV-9.')] }, config)).rejects.toThrow(/killed/);
    expect(running.memory.provider.made('payments.charge')).toHaveLength(1);
    // The restarted process resumes the thread from its checkpoint.
    const { messages } = await agent([real!], saver).invoke(null, config);
    expect(answerOf(toolMessages(messages)[0]!)).toMatchObject({ status: 'done' });
    expect(running.memory.provider.made('payments.charge')).toHaveLength(1);
    expect((await running.client.history('thread-2')).map((s) => s.step)).toEqual(['call-1.0']);
  });

  it('unknown is a successful ToolMessage in effectd\'s words, not an error', async () => {
    running = await httpMemoryApp({ answerBudget: { defaultMs: 0, maxMs: 0 } });
    running.memory.provider.arm('payments.charge', { type: 'drop-after-mutation' });
    const tools = await effectdTools(running.client, { tools: ['payments.charge'] });
    const { messages } = await agent(tools, new MemorySaver()).invoke({ messages: [new HumanMessage('Charge INV-9.')] }, { configurable: { thread_id: 'thread-3' } });
    const [result] = toolMessages(messages);
    expect(result!.status).not.toBe('error');
    expect(answerOf(result!)).toMatchObject({ status: 'unknown', message: expect.stringMatching(/^unknown: .*Do not start another payments\.charge/) });
  });

  it('refuses a call with no thread to name the workflow, or made outside a graph', () => {
    const codeOf = (config: Parameters<typeof langGraphIdentity>[0]) => {
      try {
        langGraphIdentity(config);
      } catch (error) {
        return isEffectdError(error) ? error.code : String(error);
      }
      return 'accepted';
    };
    expect(codeOf({ configurable: {} })).toBe('invalid_command');
    expect(codeOf({ configurable: { thread_id: 'thread-4' }, metadata: { langgraph_step: 3 }, toolCall: { id: 'call_a', name: 'x', args: {} } })).toBe('invalid_command');
  });
});
