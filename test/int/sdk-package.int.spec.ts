// The SDK as another TypeScript project sees it: installed under node_modules/effectd, imported as
// 'effectd/sdk', type-checked with the declarations the build emits, and loaded by Node.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tempDir } from '../support/effectd-harness.js';

const REPO = resolve('.');
const TSC = join(REPO, 'node_modules/.bin/tsc');

const CORRECT = `
import { HttpEffectClient, EffectClient, type AgentOutcome, type EffectAnswer } from 'effectd/sdk';

const client = new HttpEffectClient({ url: 'http://127.0.0.1:8080', token: 'efd_agent_x', timeoutMs: 5_000 });
export async function charge(): Promise<string> {
  const outcome: AgentOutcome = await client.submit({ workflowId: 'wf-1', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: '49.00 USD' } });
  switch (outcome.status) {
    case 'done': return outcome.receipt ?? outcome.message;
    case 'not_done': return outcome.reason ?? outcome.message;
    case 'unknown': return outcome.reference ?? outcome.message;
  }
}
export async function overKafka(): Promise<EffectAnswer['status']> {
  const kafka = await EffectClient.connect({ brokers: ['127.0.0.1:9092'], commandsTopic: 'effectd.commands', outcomesTopic: 'effectd.outcomes' });
  try {
    return (await kafka.submit({ workflowId: 'wf-1', step: 2, tool: 'email.send', args: {} })).status;
  } finally {
    await kafka.close();
  }
}
`;

const MISUSED = `
import { HttpEffectClient, type AgentOutcome } from 'effectd/sdk';

const client = new HttpEffectClient({ url: 'http://127.0.0.1:8080' });
export async function charge(): Promise<boolean> {
  const outcome: AgentOutcome = await client.submit({ workflowId: 'wf-1', tool: 'payments.charge', args: {} });
  return outcome.status === 'failed';
}
`;

describe("the SDK as an installed package ('effectd/sdk')", () => {
  let consumer: string;

  beforeAll(async () => {
    await ensureBuilt();
    consumer = tempDir('effectd-sdk-consumer-');
    mkdirSync(join(consumer, 'node_modules'));
    symlinkSync(REPO, join(consumer, 'node_modules/effectd'), 'dir');
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
    const { code, output } = typecheck(CORRECT);
    expect(output).toBe('');
    expect(code).toBe(0);
  });

  it('refuses a harness that misuses it: missing token and step, a status that does not exist', () => {
    const { code, output } = typecheck(MISUSED);
    expect(code).not.toBe(0);
    expect(output).toMatch(/harness\.ts\(4,.*Property 'token' is missing/);
    expect(output).toMatch(/harness\.ts\(6,.*Property 'step' is missing/);
    expect(output).toMatch(/harness\.ts\(7,.*'"failed"'/);
  });

  it('loads in Node under the same name', () => {
    const names = execFileSync(process.execPath, ['--input-type=module', '-e', "const m = await import('effectd/sdk'); console.log(Object.keys(m).sort().join(' '))"], { cwd: consumer, encoding: 'utf8' }).trim().split(' ');
    expect(names).toEqual(expect.arrayContaining(['EffectClient', 'HttpEffectClient', 'WorkflowJournal', 'encodeCommand']));
  });
});
