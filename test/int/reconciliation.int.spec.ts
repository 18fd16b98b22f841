import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deriveEffectId, deriveProviderKey } from '../../src/core/identity.js';
import { httpExchange } from '../../src/providers/http-exchange.js';
import { buildRequest } from '../../src/providers/http-provider.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, ensureBuilt, getJson, postJson, spawnEffectd, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

const run = promisify(execFile);
interface LoggedRequest { method: string; path: string; idempotencyKey: string | null; status: number | string; replayed: boolean }
const posts = async (sim: RunningSimulator, prefix: string) => ((await getJson(`${sim.url}/_admin/requests`)).body as { requests: LoggedRequest[] }).requests.filter((r) => r.method === 'POST' && r.path.startsWith(prefix));
const oracle = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body;
const arm = (sim: RunningSimulator, rules: unknown[]) => postJson(`${sim.url}/_admin/faults`, { rules });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** These tests are about the background reconciler: the answer does not wait for an inline settle (docs/inline-settle.md). */
const atOnce = { prefer: 'wait=0' };

let n = 0;
const chargeCommand = () => ({ workflowId: `wf-rec-${process.pid}-${++n}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-R${n}`, amount: 2500 } });

async function effectState(effectd: InProcessEffectd, effectId: string) {
  return (await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.agent)).body;
}
async function settled(effectd: InProcessEffectd, effectId: string, states = ['committed', 'failed_before_effect', 'terminal_failure', 'escalated'], timeoutMs = 8_000) {
  return waitFor(`effect ${effectId} to leave unknown`, async () => {
    const e = await effectState(effectd, effectId);
    return states.includes(e.state) ? e : undefined;
  }, timeoutMs, 50);
}
async function timeline(effectd: InProcessEffectd, workflowId: string) {
  return (await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.agent)).body.timeline as { type: string; event: Record<string, any> }[];
}

describe('reconciliation of unknown effects', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  async function setup(simOptions: Record<string, unknown>, overrides: Record<string, Record<string, unknown>>) {
    const payments = await startSimulator('payments', { options: simOptions });
    const weak = await startSimulator('weak');
    const dataDir = tempDir();
    const effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url, weak: weak.url }, overrides) });
    open.push(payments, weak, effectd);
    return { payments, weak, effectd, dataDir };
  }

  it('a stored 500 replayed under the key ends as terminal_failure after exactly one dispatch', async () => {
    const { payments, effectd, dataDir } = await setup({}, {});
    const cmd = chargeCommand();
    // A previous dispatch of this very effect got a 500 that the provider stored under the key.
    const secret = Buffer.from(readFileSync(join(dataDir, 'secret'), 'utf8').trim(), 'hex');
    const effectId = deriveEffectId(secret, { tenant: 'default', workflowId: cmd.workflowId, step: '1', slot: '0' });
    const tool = effectd.runtime.tools.get('payments.charge')!;
    const args = tool.schema.parse(cmd.args);
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'status', status: 500, afterExecutionBegan: true } }]);
    const seeded = await httpExchange(buildRequest(tool, { args, providerKey: deriveProviderKey(secret, effectId, tool.scope(args)), reference: effectId }));
    expect(seeded).toMatchObject({ kind: 'response', status: 500 });

    const answer = await postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, ...atOnce });
    expect(answer.body).toMatchObject({ effectId, state: 'terminal_failure', status: 'unknown' });
    // Nothing is sent again under the poisoned key; the lookup goes on through the settle window, then a human.
    expect(answer.body.message).toMatch(/stored failure, so effectd sends nothing again and keeps looking it up .* then a human decides/);
    await sleep(600); // many reconciler ticks: nothing may retry a poisoned key
    const sent = await posts(payments, '/v1/charges');
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({ status: 500, replayed: true });
    expect((await effectState(effectd, effectId)).state).toBe('terminal_failure');
    // Not a human's yet: effectd still looks it up (a commit may hide behind the stored 500).
    const queue = (await getJson(`${effectd.url}/v1/effects?state=attention`, effectd.operator)).body.effects;
    expect(queue.map((e: { effectId: string }) => e.effectId)).not.toContain(effectId);
    expect((await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.operator)).body.evidence.map((e: { type: string }) => e.type)).toContain('ReconciliationChecked');
    expect((await oracle(payments)).charges).toHaveLength(0);
  });

  it('a first-hand 500 is unknown; the reconciler\'s same-key resend meets the stored replay and stops at terminal_failure', async () => {
    const { payments, effectd } = await setup({ searchLagMs: 0 }, { 'payments.charge': { settleWindowMs: 300 } });
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'status', status: 500, afterExecutionBegan: true } }]);
    const answer = await postJson(`${effectd.url}/v1/effects`, chargeCommand(), { ...effectd.agent, ...atOnce });
    expect(answer.body.state).toBe('unknown');
    expect((await settled(effectd, answer.body.effectId)).state).toBe('terminal_failure');
    await sleep(500);
    expect(await posts(payments, '/v1/charges')).toHaveLength(2);
    // Its settle window is over and the lookups found nothing: now it is a human's.
    const queue = (await getJson(`${effectd.url}/v1/effects?state=attention`, effectd.operator)).body.effects;
    expect(queue.map((e: { effectId: string }) => e.effectId)).toContain(answer.body.effectId);
    expect((await getJson(`${effectd.url}/v1/effects/${answer.body.effectId}`, effectd.agent)).body.message).toMatch(/held for a human/);
  });

  it('a search that lags the write still reconciles to committed within the settle window, without a resend', async () => {
    const { payments, effectd } = await setup({ searchLagMs: 800 }, { 'payments.charge': { settleWindowMs: 5_000 } });
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
    const cmd = chargeCommand();
    const answer = await postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, ...atOnce });
    expect(answer.body.status).toBe('unknown');
    const done = await settled(effectd, answer.body.effectId);
    expect(done.state).toBe('committed');
    const truth = (await oracle(payments)).charges;
    expect(truth).toHaveLength(1);
    expect(done.receipt).toBe(truth[0].id);
    expect(await posts(payments, '/v1/charges')).toHaveLength(1);
    const checks = (await timeline(effectd, cmd.workflowId)).filter((e) => e.type === 'ReconciliationChecked').map((e) => e.event.verdict);
    expect(checks[0]).toBe('pending');
    expect(checks[checks.length - 1]).toBe('committed');
  });

  it('an expired key is never re-sent: the agent\'s retry after expiry is held, and the lookup settles it', async () => {
    const { payments, effectd } = await setup({ searchLagMs: 1_200, retentionMs: 300 }, { 'payments.charge': { settleWindowMs: 4_000, idempotency: { retentionMs: 300 } } });
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
    const cmd = chargeCommand();
    const first = await postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, ...atOnce });
    expect(first.body.status).toBe('unknown');
    await sleep(450); // the provider has forgotten the key: a resend now would charge twice
    const retry = await postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, ...atOnce });
    expect(retry.body.status).toBe('unknown');
    expect(retry.body.message).toMatch(/Do not start another payments.charge for invoice INV-R/);
    expect(await posts(payments, '/v1/charges')).toHaveLength(1);
    const done = await settled(effectd, first.body.effectId);
    expect(done.state).toBe('committed');
    expect(await posts(payments, '/v1/charges')).toHaveLength(1);
    expect((await oracle(payments)).charges).toHaveLength(1);
  });

  it('with neither key nor lookup (weak.notify) a lost reply is escalated with its evidence; operators resolve, agents cannot', async () => {
    const { weak, effectd } = await setup({}, {});
    await arm(weak, [{ match: { method: 'POST', pathPrefix: '/notify', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
    const cmd = { workflowId: `wf-notify-${++n}`, step: 1, tool: 'weak.notify', args: { channel: 'ops', about: 'deploy 42', text: 'deploy done' } };
    const answer = await postJson(`${effectd.url}/v1/effects`, cmd, effectd.agent);
    const escalated = await settled(effectd, answer.body.effectId);
    expect(escalated).toMatchObject({ state: 'escalated', status: 'unknown' });
    expect(escalated.reason).toMatch(/neither an idempotency key nor a lookup/);
    expect(escalated.message).toMatch(/with a human.*Do not start another weak.notify for channel ops/);
    // The agent's resubmission never resends.
    expect((await postJson(`${effectd.url}/v1/effects`, cmd, effectd.agent)).body.state).toBe('escalated');
    expect((await oracle(weak)).notifications).toHaveLength(1);

    const queue = (await getJson(`${effectd.url}/v1/effects?state=escalated`, effectd.operator)).body.effects;
    expect(queue.map((e: { effectId: string }) => e.effectId)).toContain(answer.body.effectId);
    const resolve = (headers: Record<string, string>, body: unknown) => postJson(`${effectd.url}/v1/effects/${answer.body.effectId}/resolve`, body, headers);
    expect((await resolve(effectd.agent, { outcome: 'committed', receipt: 'msg-1', reason: 'seen in #ops' })).status).toBe(403);
    expect((await resolve({}, { outcome: 'committed', receipt: 'msg-1', reason: 'seen in #ops' })).status).toBe(401);
    expect((await resolve(effectd.operator, { outcome: 'committed', reason: 'no receipt' })).status).toBe(400);
    const resolved = await resolve(effectd.operator, { outcome: 'committed', receipt: 'msg-1', reason: 'seen in #ops at 10:02' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ state: 'committed', status: 'done', receipt: 'msg-1', resolvedBy: 'default-operator' });
    const event = (await timeline(effectd, cmd.workflowId)).find((e) => e.type === 'EffectResolved')!;
    expect(event.event).toMatchObject({ resolvedBy: 'default-operator', outcome: 'committed', receipt: 'msg-1', reason: 'seen in #ops at 10:02' });
    expect((await resolve(effectd.operator, { outcome: 'not_committed', reason: 'again' })).status).toBe(409);
  });

  it('credentials: no token is 401; an agent cannot see or act for another tenant', async () => {
    const { effectd } = await setup({}, {});
    expect((await postJson(`${effectd.url}/v1/effects`, chargeCommand())).status).toBe(401);
    expect((await getJson(`${effectd.url}/v1/effects?state=escalated`, { authorization: 'Bearer not-a-token-of-this-effectd' })).status).toBe(401);
    const other = await postJson(`${effectd.url}/v1/effects`, { ...chargeCommand(), tenant: 'acme' }, effectd.operator);
    expect(other.status).toBe(200);
    expect((await getJson(`${effectd.url}/v1/effects/${other.body.effectId}`, effectd.agent)).status).toBe(404); // another tenant's effect is answered as one that does not exist
    expect((await getJson(`${effectd.url}/v1/workflows/${other.body.workflowId ?? 'x'}?tenant=acme`, effectd.agent)).status).toBe(403);
    expect((await postJson(`${effectd.url}/v1/effects`, { ...chargeCommand(), tenant: 'acme' }, effectd.agent)).status).toBe(403);
    expect((await getJson(`${effectd.url}/v1/effects/${other.body.effectId}`, effectd.operator)).status).toBe(200);
  });
});

describe('leases and the operator CLI (separate processes)', () => {
  let payments: RunningSimulator;
  let weak: RunningSimulator;
  beforeAll(async () => {
    await ensureBuilt();
    payments = await startSimulator('payments', { options: { searchLagMs: 0 } });
    weak = await startSimulator('weak');
  });
  afterAll(async () => {
    await payments.close();
    await weak.close();
  });

  it('a claim whose instance died becomes unknown when its lease runs out, and is then reconciled by lookup (no resend)', async () => {
    const dir = tempDir();
    const config = writeToolsConfig(dir, { payments: payments.url }, { 'payments.charge': { timeoutMs: 800, settleWindowMs: 3_000 } });
    await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'delay', ms: 1_000 } }]);
    const first = await spawnEffectd(['--data-dir', dir, '--config', config]);
    const cmd = { workflowId: `wf-lease-${process.pid}`, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-lease', amount: 700 } };
    const pending = postJson(`${first.url}/v1/effects`, cmd, authHeaders(dir, 'agent')).catch(() => 'lost');
    await waitFor('the provider to receive the charge', async () => ((await posts(payments, '/v1/charges')).length > 0 ? true : undefined));
    await first.kill('SIGKILL');
    await pending;
    const second = await spawnEffectd(['--data-dir', dir, '--config', config]);
    try {
      const headers = authHeaders(dir, 'agent');
      const final = await waitFor('the reconciler to settle it', async () => {
        const wf = (await getJson(`${second.url}/v1/workflows/${cmd.workflowId}`, headers)).body;
        return wf.effects?.[0]?.state === 'committed' ? wf : undefined;
      }, 15_000, 100);
      const events = final.timeline.map((e: { event: Record<string, any> }) => e.event);
      const claim = events.find((e: { type: string }) => e.type === 'AttemptStarted');
      const check = events.find((e: { type: string; verdict?: string }) => e.type === 'ReconciliationChecked' && e.verdict === 'committed');
      expect(check.at).toBeGreaterThanOrEqual(claim.leaseUntil); // the live claim was never stolen
      expect(events.filter((e: { type: string }) => e.type === 'AttemptStarted')).toHaveLength(1);
      expect(await posts(payments, '/v1/charges')).toHaveLength(1);
      expect(final.effects[0].receipt).toBe((await oracle(payments)).charges[0].id);
    } finally {
      await second.kill('SIGTERM');
    }
  });

  it('effectd effects --state escalated and effectd resolve work against a running effectd', async () => {
    const dir = tempDir();
    const config = writeToolsConfig(dir, { weak: weak.url }, {});
    await arm(weak, [{ match: { method: 'POST', pathPrefix: '/notify' }, action: { type: 'drop-after-mutation' } }]);
    const server = await spawnEffectd(['--data-dir', dir, '--config', config]);
    try {
      const answer = await postJson(`${server.url}/v1/effects`, { workflowId: 'wf-cli', step: 1, tool: 'weak.notify', args: { channel: 'ops', about: 'greeting', text: 'hello' } }, authHeaders(dir, 'agent'));
      const effectId = answer.body.effectId as string;
      const cli = (...args: string[]) => run(process.execPath, ['bin/effectd.js', ...args, '--url', server.url, '--data-dir', dir]);
      const listed = await waitFor('the escalation to show', async () => {
        const { stdout } = await cli('effects', '--state', 'escalated');
        return stdout.includes(effectId) ? stdout : undefined;
      });
      expect(listed).toMatch(/escalated\s+weak.notify/);
      const shown = await cli('effects', effectId);
      expect(shown.stdout).toMatch(/escalated to a human/);
      const resolved = await cli('resolve', effectId, '--not-committed', '--reason', 'not in the #ops history');
      expect(resolved.stdout).toMatch(/is now failed_before_effect, resolved by default-operator/);
      await expect(cli('resolve', effectId, '--committed', '--reason', 'x')).rejects.toThrow(/--committed needs --receipt/);
    } finally {
      await server.kill('SIGTERM');
    }
  });
});
