// @effectd/sdk/ai: effectd's catalog as an AI SDK ToolSet, driven by the AI SDK's own generateText
// and mock model against effectd in process (HTTP on loopback). The identity comes from the
// conversation (chat id, position of the call); `unknown` reaches the model as a result, not an error.
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { chargingModel } from '../../packages/bench/src/labs/charging-model.js';
import { aiSdkIdentity, effectdTools, type ToolAnswer } from '../../src/sdk/ai.js';
import { httpMemoryApp, type HttpMemoryApp } from '../support/http-memory-app.js';

let running: HttpMemoryApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const ask: ModelMessage[] = [{ role: 'user', content: 'Charge invoice INV-7 for 12.00 USD.' }];
const charge = { invoiceId: 'INV-7', amount: '12.00 USD' };

/** One agent run: generateText with the scripted model, the messages it would persist, and what its tool answered. */
async function run(app: HttpMemoryApp, workflowId: string, messages: ModelMessage[], args: Record<string, unknown> = charge) {
  const model = chargingModel('payments_charge', args);
  const result = await generateText({ model, tools: await effectdTools(app.client, { workflowId, tools: ['payments.charge'] }), messages, stopWhen: stepCountIs(3) });
  const answers = result.steps.flatMap((s) => s.toolResults.map((r) => r.output as ToolAnswer));
  return { result, answers, model, persisted: [...messages, ...result.response.messages] };
}

describe('@effectd/sdk/ai: effectd tools for the AI SDK', () => {
  it('offers the catalog\'s tools under model-safe names with effectd\'s input schema', async () => {
    running = await httpMemoryApp();
    const tools = await effectdTools(running.client, { workflowId: 'chat-1' });
    expect(Object.keys(tools)).toContain('payments_charge');
    expect(Object.keys(tools).every((name) => /^[A-Za-z0-9_-]+$/.test(name))).toBe(true);
    const { model } = await run(running, 'chat-1', ask);
    const offered = model.doGenerateCalls[0]!.tools!.find((t) => t.name === 'payments_charge') as { inputSchema: { properties: Record<string, unknown> } };
    expect(Object.keys(offered.inputSchema.properties)).toEqual(expect.arrayContaining(['invoiceId', 'amount']));
  });

  it('charges once; the step is the call\'s position in the conversation, and a resumed run is the same effect', async () => {
    running = await httpMemoryApp();
    const first = await run(running, 'chat-2', ask);
    expect(first.answers).toEqual([expect.objectContaining({ status: 'done', receipt: expect.stringMatching(/\S/) })]);
    // A resumed process re-runs from the messages it had persisted before the tool call (the user's
    // alone): the model calls again under another tool-call id, at the same position.
    const resumed = await run(running, 'chat-2', ask);
    expect(resumed.answers).toEqual([expect.objectContaining({ status: 'done', effectId: first.answers[0]!.effectId, receipt: first.answers[0]!.receipt })]);
    expect(running.memory.provider.made('payments.charge')).toHaveLength(1);
    const history = await running.client.history('chat-2');
    expect(history.map((s) => s.step)).toEqual(['call-1.0']);
    expect(aiSdkIdentity('chat-2', ask, 0)).toEqual({ workflowId: 'chat-2', step: 'call-1.0' });
  });

  it('two calls in one response are two steps, numbered the same when the same toolset runs the conversation again', async () => {
    running = await httpMemoryApp();
    const tools = await effectdTools(running.client, { workflowId: 'chat-6', tools: ['payments.charge'] });
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
    const twoCalls = () => new MockLanguageModelV3({
      doGenerate: {
        content: ['INV-61', 'INV-62'].map((invoiceId, i) => ({ type: 'tool-call' as const, toolCallId: `call_${Math.random().toString(36).slice(2)}${i}`, toolName: 'payments_charge', input: JSON.stringify({ invoiceId, amount: 100 }) })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
      },
    });
    const statuses = async () => (await generateText({ model: twoCalls(), tools, messages: ask })).toolResults.map((r) => (r.output as ToolAnswer).status);
    expect(await statuses()).toEqual(['done', 'done']);
    expect(await statuses()).toEqual(['done', 'done']);
    expect((await running.client.history('chat-6')).map((s) => s.step)).toEqual(['call-1.0', 'call-1.1']);
    expect(running.memory.provider.made('payments.charge')).toHaveLength(2);
  });

  it('a deliberate new call later in the conversation is a new step (another invoice: charged)', async () => {
    running = await httpMemoryApp();
    const first = await run(running, 'chat-3', ask);
    const next = await run(running, 'chat-3', [...first.persisted, { role: 'user', content: 'Now charge INV-8.' }], { invoiceId: 'INV-8', amount: '5.00 USD' });
    expect(next.answers[0]).toMatchObject({ status: 'done' });
    expect(next.answers[0]!.effectId).not.toBe(first.answers[0]!.effectId);
    expect((await running.client.history('chat-3')).map((s) => s.step)).toEqual(['call-1.0', `call-${first.persisted.length + 1}.0`]);
    expect(running.memory.provider.made('payments.charge')).toHaveLength(2);
  });

  it('unknown reaches the model as a tool result (not an error) in effectd\'s words: do not start another', async () => {
    running = await httpMemoryApp({ answerBudget: { defaultMs: 0, maxMs: 0 } });
    running.memory.provider.arm('payments.charge', { type: 'drop-after-mutation' });
    const { answers, model, result } = await run(running, 'chat-4', ask);
    expect(answers).toEqual([expect.objectContaining({ status: 'unknown', message: expect.stringMatching(/^unknown: .*Do not start another payments\.charge/) })]);
    expect(result.steps[0]!.content.some((part) => part.type === 'tool-error')).toBe(false);
    const toolMessage = model.doGenerateCalls[1]!.prompt.find((m) => m.role === 'tool')!;
    expect(toolMessage.content[0]).toMatchObject({ type: 'tool-result', output: { type: 'json', value: { status: 'unknown' } } });
  });

  it('a changed intent for a recorded step is a refusal the model reads, with where the recorded effect stands', async () => {
    running = await httpMemoryApp();
    await run(running, 'chat-5', ask);
    const rephrased = await run(running, 'chat-5', ask, { invoiceId: 'INV-7', amount: '13.00 USD' });
    expect(rephrased.answers).toEqual([expect.objectContaining({ status: 'refused', message: expect.stringMatching(/^refused: /) })]);
    expect(running.memory.provider.made('payments.charge')).toHaveLength(1);
  });
});
