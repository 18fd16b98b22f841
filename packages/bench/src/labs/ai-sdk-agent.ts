// The crash lab's agent (ai-sdk-lab.ts starts it, kills it and starts it again): an AI SDK agent that
// charges one invoice. generateText with a scripted model that decides to call `payments_charge`; the
// messages are persisted after every step (the AI SDK's way to resume: [...messages,
// ...response.messages]) and read back when the process starts again. The tool calls the payments
// provider directly (`direct`: its Idempotency-Key is the tool-call id, the id a careful tool without
// effectd would use) or goes through effectd (`effectd`: @effectd/sdk/ai's effectdTools).
//
//   node ai-sdk-agent.js '<AgentSpec as JSON>'
//
// Named crash points (`pause`): `before` holds the tool call before it reaches the provider or
// effectd, `after` once its answer came back and before the step's messages are persisted. Held, the
// process prints `paused <point>` and waits: the lab SIGKILLs it there.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage, type Tool, type ToolSet } from 'ai';
import { effectdTools } from '../../../../src/sdk/ai.js';
import { HttpEffectClient } from '../../../../src/sdk/http-effect-client.js';
import { chargingModel } from './charging-model.js';

export interface AgentSpec {
  mode: 'direct' | 'effectd';
  /** The conversation's id (the workflow) and the file its messages are persisted in. */
  chatId: string;
  stateFile: string;
  invoiceId: string;
  paymentsUrl: string;
  effectd?: { url: string; token: string };
  pause?: 'before' | 'after';
}

const spec = JSON.parse(process.argv[2] ?? '{}') as AgentSpec;
const args = { invoiceId: spec.invoiceId, amount: 1200, currency: 'usd' };

const messages: ModelMessage[] = existsSync(spec.stateFile)
  ? (JSON.parse(readFileSync(spec.stateFile, 'utf8')) as ModelMessage[])
  : [{ role: 'user', content: `Charge invoice ${spec.invoiceId}: 12.00 USD.` }];

const tools = withCrashPoint(spec.mode === 'effectd' ? await viaEffectd() : direct(), spec.pause);
const result = await generateText({
  model: chargingModel('payments_charge', args),
  tools, messages, stopWhen: stepCountIs(4),
  onStepFinish: (step) => persist([...messages, ...step.response.messages]),
});
console.log(`finished ${result.text}`);

async function viaEffectd(): Promise<ToolSet> {
  const client = new HttpEffectClient({ url: spec.effectd!.url, token: spec.effectd!.token, timeoutMs: 20_000 });
  return effectdTools(client, { workflowId: spec.chatId, tools: ['payments.charge'] });
}

/** The tool as it is written without effectd: POST the charge, keyed by the tool-call id. */
function direct(): ToolSet {
  return {
    payments_charge: tool<Record<string, unknown>, unknown>({
      description: 'Charge a customer for an invoice.',
      inputSchema: jsonSchema<Record<string, unknown>>({ type: 'object', properties: { invoiceId: { type: 'string' }, amount: { type: 'integer' }, currency: { type: 'string' } }, required: ['invoiceId', 'amount'] }),
      execute: async (input, { toolCallId }) => {
        const res = await fetch(`${spec.paymentsUrl}/v1/charges`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': toolCallId },
          body: JSON.stringify({ amount: input.amount, currency: input.currency ?? 'usd', metadata: { invoice_id: input.invoiceId } }),
        });
        return { status: res.status, charge: await res.json() };
      },
    }),
  };
}

/** Every tool held at the crash point, if any: the lab kills the process while it waits. */
function withCrashPoint(set: ToolSet, pause: AgentSpec['pause']): ToolSet {
  if (!pause) return set;
  const held: ToolSet = {};
  for (const [name, original] of Object.entries(set)) {
    const execute = original.execute!;
    held[name] = {
      ...original,
      execute: async (input: unknown, options: Parameters<typeof execute>[1]) => {
        if (pause === 'before') await hold('before');
        const output: unknown = await execute(input, options);
        if (pause === 'after') await hold('after');
        return output;
      },
    } as Tool;
  }
  return held;
}

async function hold(point: string): Promise<void> {
  console.log(`paused ${point}`);
  await once(process.stdin, 'data');
}

function persist(all: ModelMessage[]): void {
  writeFileSync(`${spec.stateFile}.next`, JSON.stringify(all));
  renameSync(`${spec.stateFile}.next`, spec.stateFile);
}
