// @effectd/sdk/openai-agents: effectd's catalog as OpenAI Agents SDK function tools, driven by the
// SDK's own run() with a scripted Model and a MemorySession, against effectd in process (HTTP on
// loopback). The workflow is the session; the step, where the run sits in it and the call's index in
// the run; `unknown` reaches the model as an ordinary tool output in effectd's words.
import { Agent, MemorySession, run, setTracingDisabled, type FunctionTool } from '@openai/agents';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { effectdTools } from '../../src/sdk/openai-agents.js';
import { ChargingAgentsModel } from '../support/agents-charging-model.js';
import { httpMemoryApp, type HttpMemoryApp } from '../support/http-memory-app.js';

let running: HttpMemoryApp | undefined;
beforeAll(() => setTracingDisabled(true));
afterEach(async () => {
  await running?.close();
  running = undefined;
});

function agent(tools: FunctionTool<unknown, never, unknown>[] | Awaited<ReturnType<typeof effectdTools>>, invoiceId = 'INV-11') {
  const model = new ChargingAgentsModel('payments_charge', () => ({ invoiceId, amount: '12.00 USD' }));
  return { model, agent: new Agent({ name: 'billing', instructions: 'Charge what you are asked to.', model, tools }) };
}

describe('@effectd/sdk/openai-agents: effectd tools for the OpenAI Agents SDK', () => {
  it('charges once; the workflow is the session, the step where the run sits in it', async () => {
    running = await httpMemoryApp();
    const session = new MemorySession({ sessionId: 'session-1' });
    const tools = await effectdTools(running.client, { session, tools: ['payments.charge'] });
    expect(tools.map((t) => t.name)).toEqual(['payments_charge']);
    const result = await run(agent(tools).agent, 'Charge INV-11.', { session });
    expect(result.finalOutput).toMatch(/^finished: .*"status":"done"/);
    expect((await running.client.history('session-1')).map((s) => s.step)).toEqual(['call-0.0']);
    // The next run of the conversation starts further on: a new step, here another invoice charged.
    await run(agent(tools, 'INV-12').agent, 'Now charge INV-12.', { session });
    expect((await running.client.history('session-1')).map((s) => s.step)).toEqual(['call-0.0', 'call-4.0']);
    expect(running.memory.provider.made('payments.charge')).toHaveLength(2);
  });

  it('an agent killed in the tool call and run again with the same input is the same effect: one charge', async () => {
    running = await httpMemoryApp();
    const session = new MemorySession({ sessionId: 'session-2' });
    const [real] = await effectdTools(running.client, { session, tools: ['payments.charge'] });
    // The first process: effectd answers, then the process dies before the run's items reach the session.
    const dying = { ...real!, invoke: async (...call: Parameters<typeof real.invoke>) => {
      await real!.invoke(...call);
      throw new Error('killed after effectd answered');
    } };
    await expect(run(agent([dying]).agent, 'Charge INV-11.', { session })).rejects.toThrow(/killed/);
    expect(await session.getItems()).toHaveLength(0);
    const resumed = await run(agent([real!]).agent, 'Charge INV-11.', { session });
    expect(resumed.finalOutput).toMatch(/"status":"done"/);
    expect(running.memory.provider.made('payments.charge')).toHaveLength(1);
    expect((await running.client.history('session-2')).map((s) => s.step)).toEqual(['call-0.0']);
  });

  it('unknown reaches the model as an ordinary tool output in effectd\'s words: do not start another', async () => {
    running = await httpMemoryApp({ answerBudget: { defaultMs: 0, maxMs: 0 } });
    running.memory.provider.arm('payments.charge', { type: 'drop-after-mutation' });
    const session = new MemorySession({ sessionId: 'session-3' });
    const { model, agent: billing } = agent(await effectdTools(running.client, { session, tools: ['payments.charge'] }));
    await run(billing, 'Charge INV-11.', { session });
    const shown = (model.requests[1]!.input as { type?: string; output?: unknown }[]).find((item) => item.type === 'function_call_result')!;
    expect(JSON.stringify(shown.output)).toMatch(/\\"status\\":\\"unknown\\".*unknown: .*Do not start another payments\.charge/);
  });
});
