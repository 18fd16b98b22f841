// The SDK as another TypeScript project sees it, under both its names: '@effectd/sdk' (its own
// package, built from src/sdk by its workspace) and 'effectd/sdk' (the main package's export, for
// existing users): type-checked with the declarations the builds emit, and loaded by Node.
// test/int/package-e2e.int.spec.ts installs the packed @effectd/sdk alone into a fresh project.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tempDir } from '../support/effectd-harness.js';

const REPO = resolve('.');
const TSC = join(REPO, 'node_modules/.bin/tsc');

const CORRECT = (sdk: string) => `
import { HttpEffectClient, EffectClient, type EffectResult, type EffectAnswer, type RecordedEffect } from '${sdk}';

const client = new HttpEffectClient({ url: 'http://127.0.0.1:8080', token: 'efd_agent_x', timeoutMs: 5_000 });
export async function charge(): Promise<string> {
  const outcome: EffectResult = await client.submit({ workflowId: 'wf-1', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: '49.00 USD' } });
  switch (outcome.status) {
    case 'done': return outcome.receipt ?? outcome.message;
    case 'not_done': return outcome.reason ?? outcome.message;
    case 'unknown': return outcome.reference ?? outcome.message;
    case 'refused': return outcome.error.recorded?.status ?? outcome.error.code;
  }
}
export async function overKafka(): Promise<EffectAnswer['status'] | RecordedEffect['status']> {
  const kafka = await EffectClient.connect({ brokers: ['127.0.0.1:9092'], token: 'efd_agent_x', commandsTopic: 'effectd.commands', outcomesTopic: 'effectd.outcomes' });
  try {
    const answer = await kafka.submit({ workflowId: 'wf-1', step: 2, tool: 'email.send', args: {} });
    return answer.status === 'refused' ? answer.error.recorded?.status ?? 'refused' : answer.status;
  } finally {
    await kafka.close();
  }
}
`;

const MISUSED = (sdk: string) => `
import { HttpEffectClient, type EffectResult } from '${sdk}';

const client = new HttpEffectClient({ url: 'http://127.0.0.1:8080' });
export async function charge(): Promise<boolean> {
  const outcome: EffectResult = await client.submit({ workflowId: 'wf-1', tool: 'payments.charge', args: {} });
  return outcome.status === 'failed';
}
`;

for (const sdk of ['@effectd/sdk', 'effectd/sdk']) describe(`the SDK as an installed package ('${sdk}')`, () => {
  let consumer: string;

  beforeAll(async () => {
    await ensureBuilt();
    if (sdk === '@effectd/sdk') execFileSync('npm', ['run', 'build', '--silent', '--workspace', '@effectd/sdk'], { cwd: REPO, stdio: 'inherit' });
    consumer = tempDir('effectd-sdk-consumer-');
    mkdirSync(join(consumer, 'node_modules/@effectd'), { recursive: true });
    if (sdk === '@effectd/sdk') symlinkSync(join(REPO, 'src/sdk'), join(consumer, 'node_modules/@effectd/sdk'), 'dir');
    else symlinkSync(REPO, join(consumer, 'node_modules/effectd'), 'dir');
    symlinkSync(join(REPO, 'node_modules/@types'), join(consumer, 'node_modules/@types'), 'dir');
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'an-agent-harness', private: true, type: 'module' }));
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2023', noEmit: true, skipLibCheck: true, types: ['node'] }, include: ['*.ts'] }));
  }, 60_000);

  const typecheck = (source: string) => {
    writeFileSync(join(consumer, 'harness.ts'), source);
    const run = spawnSync(TSC, ['-p', consumer], { cwd: consumer, encoding: 'utf8' });
    return { code: run.status, output: `${run.stdout}${run.stderr}` };
  };

  it('type-checks a harness that uses the SDK as documented', () => {
    const { code, output } = typecheck(CORRECT(sdk));
    expect(output).toBe('');
    expect(code).toBe(0);
  });

  it('refuses a harness that misuses it: missing token and step, a status that does not exist', () => {
    const { code, output } = typecheck(MISUSED(sdk));
    expect(code).not.toBe(0);
    expect(output).toMatch(/harness\.ts\(4,.*Property 'token' is missing/);
    expect(output).toMatch(/harness\.ts\(6,.*Property 'step' is missing/);
    expect(output).toMatch(/harness\.ts\(7,.*'"failed"'/);
  });

  it('loads in Node under the same name', () => {
    const names = execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import('${sdk}'); console.log(Object.keys(m).sort().join(' '))`], { cwd: consumer, encoding: 'utf8' }).trim().split(' ');
    expect(names).toEqual(expect.arrayContaining(['EffectClient', 'HttpEffectClient', 'WorkflowJournal', 'encodeCommand']));
  });
});

/** A harness of each framework, as docs/frameworks.md writes it, against the built @effectd/sdk subpaths. */
const FRAMEWORKS = `
import { generateText, type ModelMessage, type LanguageModel } from 'ai';
import { Agent, MemorySession, run } from '@openai/agents';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { HttpEffectClient } from '@effectd/sdk';
import { effectdTools as aiTools, type ToolAnswer } from '@effectd/sdk/ai';
import { effectdTools as agentsTools } from '@effectd/sdk/openai-agents';
import { effectdTools as langGraphTools } from '@effectd/sdk/langgraph';

const effectd = new HttpEffectClient({ url: 'http://127.0.0.1:8080', token: 'efd_agent_x' });
export async function withAiSdk(model: LanguageModel, messages: ModelMessage[]): Promise<ToolAnswer['status'][]> {
  const result = await generateText({ model, messages, tools: await aiTools(effectd, { workflowId: 'chat-1' }) });
  return result.toolResults.map((r) => (r.output as ToolAnswer).status);
}
export async function withAgents(): Promise<unknown> {
  const session = new MemorySession({ sessionId: 'conv-1' });
  return (await run(new Agent({ name: 'billing', tools: await agentsTools(effectd, { session }) }), 'Charge INV-1', { session })).finalOutput;
}
export async function withLangGraph(): Promise<ToolNode> {
  return new ToolNode(await langGraphTools(effectd, { tools: ['payments.charge'] }));
}
`;

/** What docs/frameworks.md's lines leave to the application, declared as it would have them. */
const DOCS_DECLARED = `
declare global {
  const chatId: string;
  const model: import('ai').LanguageModel;
  const messages: import('ai').ModelMessage[] & import('@langchain/core/messages').BaseMessage[];
  function saveChat(chatId: string, messages: import('ai').ModelMessage[]): void;
  const session: import('@openai/agents').Session;
  function callModel(state: typeof import('@langchain/langgraph').MessagesAnnotation.State): Promise<{ messages: import('@langchain/core/messages').BaseMessage[] }>;
  const checkpointer: import('@langchain/langgraph').BaseCheckpointSaver;
}
export {};
`;

describe('the SDK\'s framework adapters as installed subpaths (@effectd/sdk/ai, /openai-agents, /langgraph)', () => {
  let consumer: string;

  beforeAll(async () => {
    await ensureBuilt();
    execFileSync('npm', ['run', 'build', '--silent', '--workspace', '@effectd/sdk'], { cwd: REPO, stdio: 'inherit' });
    consumer = tempDir('effectd-sdk-frameworks-');
    mkdirSync(join(consumer, 'node_modules/@effectd'), { recursive: true });
    mkdirSync(join(consumer, 'node_modules/@langchain'), { recursive: true });
    mkdirSync(join(consumer, 'node_modules/@openai'), { recursive: true });
    symlinkSync(join(REPO, 'src/sdk'), join(consumer, 'node_modules/@effectd/sdk'), 'dir');
    for (const name of ['@types', 'ai', '@openai/agents', '@langchain/langgraph', '@langchain/core']) symlinkSync(join(REPO, 'node_modules', name), join(consumer, 'node_modules', name), 'dir');
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'a-framework-harness', private: true, type: 'module' }));
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2023', noEmit: true, skipLibCheck: true, types: ['node'] }, include: ['*.ts'] }));
  }, 60_000);

  it('type-checks a harness of each framework written as docs/frameworks.md shows', () => {
    writeFileSync(join(consumer, 'harness.ts'), FRAMEWORKS);
    const run = spawnSync(TSC, ['-p', consumer], { cwd: consumer, encoding: 'utf8' });
    expect(`${run.stdout}${run.stderr}`).toBe('');
    expect(run.status).toBe(0);
  });

  it('type-checks the lines docs/frameworks.md gives for each framework, with what they leave to the application declared', () => {
    const blocks = [...readFileSync(join(REPO, 'docs/frameworks.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks).toHaveLength(3);
    writeFileSync(join(consumer, 'docs-declared.ts'), DOCS_DECLARED);
    blocks.forEach((block, i) => writeFileSync(join(consumer, `docs-${i}.ts`), block));
    const run = spawnSync(TSC, ['-p', consumer], { cwd: consumer, encoding: 'utf8' });
    expect(`${run.stdout}${run.stderr}`).toBe('');
    expect(run.status).toBe(0);
  });

  it('loads each subpath in Node, and the SDK alone imports no framework', () => {
    const load = (specifier: string) => execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import('${specifier}'); console.log(Object.keys(m).sort().join(' '))`], { cwd: consumer, encoding: 'utf8' }).trim().split(' ');
    expect(load('@effectd/sdk/ai')).toEqual(['aiSdkIdentity', 'effectdTools']);
    expect(load('@effectd/sdk/openai-agents')).toEqual(['agentsIdentity', 'effectdTools']);
    expect(load('@effectd/sdk/langgraph')).toEqual(['effectdTools', 'langGraphIdentity']);
    const sdkImports = execFileSync('grep', ['-rlE', '--include=*.js', "from '(ai|@openai/agents|@langchain/[a-z-]+)(/[a-z-]+)?'", join(REPO, 'src/sdk/dist/src/sdk')], { encoding: 'utf8' }).trim().split('\n').map((file) => file.replace(/^.*\/dist\/src\/sdk\//, '')).sort();
    expect(sdkImports).toEqual(['ai.js', 'langgraph.js', 'openai-agents.js']);
  });
});
