import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/effectd-runtime.js';
import { getJson, postJson, suiteEffectd, tempDir } from '../support/effectd-harness.js';
import { loadSettings } from '../../src/config/settings-loader.js';

describe('bad input gets a clear 400 and the ledger stays unchanged', () => {
  const suite = suiteEffectd();
  const ledgerSize = async () => (await suite.effectd.runtime.ledger.readAll(0, 1_000_000)).length;
  const providerRequests = async () => ((await getJson(`${suite.payments.url}/_admin/requests`)).body.requests as unknown[]).length;

  beforeAll(async () => {
    await postJson(`${suite.effectd.url}/v1/effects`, { workflowId: 'wf-ok', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 100 } }, suite.effectd.agent);
  });

  const cases: [string, unknown, number, RegExp, string[]][] = [
    ['malformed JSON', '{"workflowId": "wf-1", "step": 1,', 400, /not valid JSON/, []],
    ['a JSON array instead of a command', '[1,2]', 400, /must be a JSON object/, []],
    ['an unknown tool', { workflowId: 'wf-1', step: 1, tool: 'payments.chrage', args: {} }, 400, /unknown tool "payments.chrage"; known tools: .*payments.charge/, []],
    ['a missing workflowId', { step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 100 } }, 400, /workflowId/, ['workflowId']],
    ['a missing step', { workflowId: 'wf-1', tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 100 } }, 400, /step is required/, ['step']],
    ['args failing the tool schema', { workflowId: 'wf-1', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 'forty-nine' } }, 400, /args\.amount: "forty-nine" is not an amount/, ['args.amount']],
    ['an argument the tool does not have', { workflowId: 'wf-1', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 100, tip: 5 } }, 400, /args/, ['args']],
    ['a field the command does not have', { workflowId: 'wf-1', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-1', amount: 100 }, idempotencyKey: 'mine' }, 400, /idempotencyKey/, ['(body)']],
  ];

  for (const [name, body, status, message, paths] of cases) {
    it(`${name} → ${status}, nothing persisted, provider not called`, async () => {
      const [eventsBefore, callsBefore] = [await ledgerSize(), await providerRequests()];
      const answer = await postJson(`${suite.effectd.url}/v1/effects`, body, suite.effectd.agent);
      expect(answer.status).toBe(status);
      expect(answer.body.message).toMatch(message);
      for (const path of paths) expect(answer.body.fields.map((f: { path: string }) => f.path)).toContain(path);
      expect(await ledgerSize()).toBe(eventsBefore);
      expect(await providerRequests()).toBe(callsBefore);
    });
  }
});

describe('a bad configuration fails at start, naming the tool and the field', () => {
  const start = (config: unknown) => {
    const dir = tempDir();
    const file = join(dir, 'effectd.config.json');
    writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
    return createRuntime({ dataDir: dir, configFile: file, settings: loadSettings({}) });
  };
  const tool = { name: 'crm.create-ticket', provider: 'crm', request: { path: '/tickets' }, args: { title: { type: 'string' } }, target: '{args.title}', reversibility: 'compensable', idempotency: { kind: 'none' } };

  it('rejects a wrong field type', async () => {
    await expect(start({ providers: { crm: { baseUrl: 'http://127.0.0.1:9' } }, tools: [{ ...tool, idempotency: { kind: 'header', retentionMs: 'a day' } }] })).rejects.toThrow(/tool "crm.create-ticket", field "idempotency.retentionMs"/);
  });
  it('rejects an unknown provider', async () => {
    await expect(start({ tools: [{ ...tool, provider: 'nope' }] })).rejects.toThrow(/tool "crm.create-ticket", field "provider" names provider "nope"/);
  });
  it('rejects a template that names no argument', async () => {
    await expect(start({ providers: { crm: { baseUrl: 'http://127.0.0.1:9' } }, tools: [{ ...tool, target: '{args.titel}' }] })).rejects.toThrow(/tool "crm.create-ticket", field "target" uses \{args.titel\}/);
  });
  it('rejects a compensation retry policy that would never try', async () => {
    await expect(start({ sagas: { compensationRetry: { attempts: 0 } } })).rejects.toThrow(/field "sagas.compensationRetry.attempts": Too small/);
  });
  it('rejects invalid JSON', async () => {
    await expect(start('{ "tools": [')).rejects.toThrow(/not valid JSON/);
  });
  it('accepts a user tool beside the built-in ones', async () => {
    const runtime = await start({ builtinTools: true, providers: { crm: { baseUrl: 'http://127.0.0.1:9' } }, tools: [tool] });
    expect(runtime.tools.get('crm.create-ticket')).toBeDefined();
    expect(runtime.tools.get('payments.charge')).toBeDefined();
    await runtime.close();
  });
});
