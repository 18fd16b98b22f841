import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpEffectClient } from '../../src/sdk/http-effect-client.js';
import { WorkflowJournal } from '../../src/sdk/workflow-journal.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { ensureBuilt, getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

const chargePosts = async (sim: RunningSimulator) => ((await getJson(`${sim.url}/_admin/requests`)).body.requests as { method: string; path: string }[]).filter((r) => r.method === 'POST' && r.path.startsWith('/v1/charges')).length;
const charges = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; amount: number; metadata: Record<string, string> }[];

describe('the content index: the model deciding again', () => {
  let payments: RunningSimulator;
  let email: RunningSimulator;
  let effectd: InProcessEffectd;
  let n = 0;
  // About holds while an effect is open: answers do not wait for an inline settle (docs/inline-settle.md).
  const submit = (body: Record<string, unknown>, headers = effectd.agent) => postJson(`${effectd.url}/v1/effects`, body, { prefer: 'wait=0', ...headers });

  beforeAll(async () => {
    payments = await startSimulator('payments', { options: { searchLagMs: 700 } });
    email = await startSimulator('email');
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url, email: email.url }, { 'payments.charge': { settleWindowMs: 5_000 } }) });
  });
  afterAll(async () => {
    await effectd.close();
    await payments.close();
    await email.close();
  });

  it('a re-decided charge for the same invoice is held while the first is unknown, and answered "already done" once it commits', async () => {
    const workflowId = `wf-redecide-${++n}`;
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'drop-after-mutation' } }] });
    const first = await submit({ workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-7001', amount: 4900 } });
    expect(first.body.status).toBe('unknown');
    await postJson(`${payments.url}/_admin/faults`, { rules: [] });

    // The model reads "unknown" and decides again: a new step, the amount written differently.
    const again = await submit({ workflowId, step: 2, tool: 'payments.charge', args: { invoiceId: 'INV-7001', amount: '49.00 USD' } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'unknown', state: 'held', reference: first.body.effectId });
    expect(again.body.message).toBe(`being checked: payments.charge for invoice INV-7001 from step 1 is not confirmed yet (reference ${first.body.effectId}); nothing was sent for step 2. Do not start another payments.charge for invoice INV-7001.`);
    expect(await chargePosts(payments)).toBe(1);

    await waitFor('step 1 to be reconciled', async () => ((await getJson(`${effectd.url}/v1/effects/${first.body.effectId}`, effectd.agent)).body.state === 'committed' ? true : undefined), 10_000);
    const truth = await charges(payments);
    expect(truth).toHaveLength(1);
    const later = await submit({ workflowId, step: 2, tool: 'payments.charge', args: { invoiceId: 'INV-7001', amount: '49.00 USD' } });
    expect(later.body).toMatchObject({ status: 'done', state: 'held', receipt: truth[0]!.id });
    expect(later.body.message).toBe(`already done: payments.charge for invoice INV-7001 happened in step 1 (receipt ${truth[0]!.id}); nothing was sent for step 2. To do it again on purpose, resubmit with "repeat": {"reason": "…"}.`);
    // Reading the held effect answers the same way, with the receipt of step 1.
    expect((await getJson(`${effectd.url}/v1/effects/${again.body.effectId}`, effectd.agent)).body).toMatchObject({ status: 'done', state: 'held', receipt: truth[0]!.id });
    // A third decision, yet another step: held at once, still one charge.
    const third = await submit({ workflowId, step: 3, tool: 'payments.charge', args: { invoiceId: 'INV-7001', amount: 4900 } });
    expect(third.body).toMatchObject({ status: 'done', state: 'held', receipt: truth[0]!.id });
    expect(await chargePosts(payments)).toBe(1);
    expect(await charges(payments)).toHaveLength(1);
  });

  it('a declared repeat is not held, and goes through exactly as declared', async () => {
    const workflowId = `wf-repeat-${++n}`;
    const reminder = { tool: 'email.send', args: { to: 'ana@example.com', template: 'reminder', subject: 'Your invoice is due', text: 'Please pay INV-7002.' } };
    const first = await submit({ workflowId, step: 1, ...reminder });
    const second = await submit({ workflowId, step: 2, ...reminder, repeat: { reason: 'the second reminder, one week later' } });
    const undeclared = await submit({ workflowId, step: 3, ...reminder });
    expect([first.body.status, second.body.status]).toEqual(['done', 'done']);
    expect(second.body.state).toBe('committed');
    expect(second.body.receipt).not.toBe(first.body.receipt);
    expect(undeclared.body.state).toBe('held');
    const sent = ((await getJson(`${email.url}/_oracle/state`)).body.emails as { to: string | string[] }[]).filter((e) => JSON.stringify(e.to).includes('ana@example.com'));
    expect(sent).toHaveLength(2);
  });

  it('different business content on a target that takes one charge is held as already done; an operator can release a held step, an agent cannot', async () => {
    const workflowId = `wf-release-${++n}`;
    await submit({ workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-7003', amount: 1000 } });
    // payments.charge declares committedPerTarget "one": an invoice is paid once, whatever amount a new step names.
    const other = await submit({ workflowId, step: 2, tool: 'payments.charge', args: { invoiceId: 'INV-7003', amount: 2000 } });
    expect(other.body).toMatchObject({ status: 'done', state: 'held' });
    expect(other.body.message).toMatch(/^already done: invoice INV-7003 already had payments\.charge in step 1 \(receipt .+\); nothing was sent for step 2\./);
    const held = await submit({ workflowId, step: 3, tool: 'payments.charge', args: { invoiceId: 'INV-7003', amount: 1000 } });
    expect(held.body.state).toBe('held');
    const before = await chargePosts(payments);
    expect((await postJson(`${effectd.url}/v1/effects/${held.body.effectId}/release`, { reason: 'x' }, effectd.agent)).status).toBe(403);
    const released = await postJson(`${effectd.url}/v1/effects/${held.body.effectId}/release`, { reason: 'the customer asked for a second charge' }, effectd.operator);
    expect(released.body).toMatchObject({ status: 'done', state: 'committed' });
    expect(await chargePosts(payments)).toBe(before + 1);
    const timeline = (await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.agent)).body.timeline.map((e: { type: string }) => e.type);
    expect(timeline).toContain('EffectHeld');
    expect(timeline).toContain('EffectReleased');
  });

  it('a resumed task replays its recorded decisions: the model is not asked again, and a rephrased submission is refused', async () => {
    const workflowId = `wf-journal-${++n}`;
    const client = new HttpEffectClient({ url: effectd.url, token: effectd.agent.authorization!.slice('Bearer '.length) });
    let modelCalls = 0;
    const model = async () => {
      modelCalls++;
      return { tool: 'payments.charge', args: { invoiceId: 'INV-7004', amount: modelCalls === 1 ? '12.00' : '12.50' } };
    };
    const first = await new WorkflowJournal(client, workflowId).decide(1, model);
    expect(first).toMatchObject({ replayed: false, args: { amount: '12.00' } });
    // The process dies; a new one resumes the task with a fresh journal.
    const resumed = await new WorkflowJournal(client, workflowId).decide(1, model);
    expect(resumed).toMatchObject({ replayed: true, args: { amount: '12.00' } });
    expect(modelCalls).toBe(1);
    const rephrased = await submit({ workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-7004', amount: '12.50' } });
    expect(rephrased.status).toBe(422);
    expect(rephrased.body.message).toMatch(/step 1 of workflow .* was decided as payments.charge/);
    expect((await submit({ workflowId, step: 1, tool: 'payments.charge', args: resumed!.args })).body.status).toBe('done');
    const history = await client.history(workflowId);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ step: '1', decision: { tool: 'payments.charge' }, outcomes: [{ status: 'done' }] });
  });
});

describe('the content index across a tenant\'s workflows (window)', () => {
  it('holds the same invoice charged from another workflow within the window', async () => {
    const payments = await startSimulator('payments');
    const dataDir = tempDir();
    const config = writeToolsConfig(dataDir, { payments: payments.url });
    const withWindow = JSON.parse(readFileSync(config, 'utf8'));
    writeFileSync(config, JSON.stringify({ ...withWindow, contentIndex: { tenantWindowMs: 60_000 } }));
    const effectd = await startEffectd({ dataDir, configFile: config });
    try {
      const a = await postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-a', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-8001', amount: 500 } }, effectd.agent);
      const b = await postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-b', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-8001', amount: 500 } }, effectd.agent);
      expect(a.body.state).toBe('committed');
      expect(b.body).toMatchObject({ status: 'done', state: 'held', receipt: a.body.receipt });
      expect(await charges(payments)).toHaveLength(1);
    } finally {
      await effectd.close();
      await payments.close();
    }
  });
});

describe('the example agent loop survives SIGKILL', () => {
  beforeAll(ensureBuilt);

  it('resumes without re-deciding settled steps and without a second effect', async () => {
    const payments = await startSimulator('payments', { options: { searchLagMs: 0 } });
    const email = await startSimulator('email');
    const dataDir = tempDir();
    const effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url, email: email.url }) });
    const modelLog = join(dataDir, 'model.log');
    writeFileSync(modelLog, '');
    const loop = () => {
      const child = spawn(process.execPath, ['dist/examples/agent-loop.js', '--url', effectd.url, '--data-dir', dataDir, '--workflow', 'renew-42', '--model-log', modelLog], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      return { child, output: () => out, exit: new Promise<number | null>((r) => child.once('exit', (code) => r(code))) };
    };
    try {
      // The provider holds the charge for a second: the loop is killed while it waits.
      await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'delay', ms: 1_000 } }] });
      const first = loop();
      await waitFor('the charge to reach the provider', async () => ((await chargePosts(payments)) > 0 ? true : undefined));
      first.child.kill('SIGKILL');
      await first.exit;
      const second = loop();
      expect(await second.exit).toBe(0);
      const output = second.output();
      expect(output).toMatch(/step 1: payments.charge .* \(replayed from the ledger; the model was not asked\)/);
      expect(output).toMatch(/step 2: email.send .* \(decided by scripted-model-v1\)/);
      expect(output).toMatch(/finished/);
      const asked = readFileSync(modelLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l).decision);
      expect(asked).toEqual(['payments.charge', 'email.send', 'finished']);
      expect(await charges(payments)).toHaveLength(1);
      expect((await getJson(`${email.url}/_oracle/state`)).body.emails).toHaveLength(1);
    } finally {
      await effectd.close();
      await payments.close();
      await email.close();
    }
  });
});
