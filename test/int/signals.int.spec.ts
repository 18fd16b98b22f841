import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { foldWorkflow } from '../../src/core/fold.js';
import { workflowStream } from '../../src/core/streams.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, ensureBuilt, getJson, postJson, spawnEffectd, startPayments, tempDir, waitFor, writeFastPaymentsConfig, type EffectdProcess } from '../support/effectd-harness.js';
import { tryConnect } from '../support/try-connect.js';

interface Running extends EffectdProcess {
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `effectd start` as an OS process, with its stdout+stderr from here on and its exit. */
async function start(dataDir: string, args: string[] = [], env: Record<string, string> = {}): Promise<Running> {
  const effectd = await spawnEffectd(['--data-dir', dataDir, ...args], env);
  let output = '';
  effectd.child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  effectd.child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => effectd.child.once('exit', (code, signal) => resolve({ code, signal })));
  return { ...effectd, output: () => output, exited };
}

const logged = (effectd: Running, pattern: RegExp) => waitFor(`effectd to log ${pattern}`, async () => (pattern.test(effectd.output()) ? true : undefined), 10_000);
const alive = (effectd: Running) => effectd.child.exitCode === null && effectd.child.signalCode === null;


interface LoggedRequest { method: string; path: string; status: number | string }
interface Charge { id: string; metadata: Record<string, string> }
const pendingCharges = async (sim: RunningSimulator) => ((await getJson(`${sim.url}/_admin/requests`)).body as { requests: LoggedRequest[] }).requests.filter((r) => r.method === 'POST' && r.path === '/v1/charges' && r.status === 'pending').length;
const charges = async (sim: RunningSimulator) => ((await getJson(`${sim.url}/_oracle/state`)).body as { charges: Charge[] }).charges;
const delayCharges = (sim: RunningSimulator, ms: number) => postJson(`${sim.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', times: 1_000 }, action: { type: 'delay', ms } }] });

describe('effectd start under signals', () => {
  const open: { close(): Promise<void> }[] = [];
  beforeAll(ensureBuilt, 120_000);
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  const track = (effectd: Running) => {
    open.push({ close: () => effectd.kill('SIGKILL') });
    return effectd;
  };

  it('SIGHUP keeps serving and reloads the credentials file: a token added to it is accepted, a broken file keeps the old ones', async () => {
    const dataDir = tempDir();
    const effectd = track(await start(dataDir));
    const agent = authHeaders(dataDir, 'agent');

    effectd.child.kill('SIGHUP');
    await logged(effectd, /SIGHUP: reloaded 2 credentials/);
    expect((await getJson(`${effectd.url}/healthz`)).status).toBe(200);
    expect((await getJson(`${effectd.url}/v1/whoami`, agent)).body).toMatchObject({ name: 'default-agent', role: 'agent' });

    const file = join(dataDir, 'credentials.json');
    const book = JSON.parse(readFileSync(file, 'utf8')) as { credentials: Record<string, unknown>[] };
    const token = `efd_agent_rotated_${randomBytes(18).toString('base64url')}`;
    const existingAgent = book.credentials.find((c) => c.role === 'agent')!;
    book.credentials.push({ ...existingAgent, token, name: 'rotated-agent' });
    writeFileSync(file, JSON.stringify(book, null, 2));
    const rotated = { authorization: `Bearer ${token}` };
    expect((await getJson(`${effectd.url}/v1/whoami`, rotated)).status).toBe(401);

    effectd.child.kill('SIGHUP');
    await logged(effectd, /SIGHUP: reloaded 3 credentials/);
    expect((await getJson(`${effectd.url}/v1/whoami`, rotated)).body).toMatchObject({ name: 'rotated-agent', role: 'agent' });

    writeFileSync(file, '{"credentials": [');
    effectd.child.kill('SIGHUP');
    await logged(effectd, /SIGHUP: kept the 3 credentials loaded before: .*fix .*credentials\.json and send SIGHUP again/);
    expect((await getJson(`${effectd.url}/v1/whoami`, rotated)).status).toBe(200);
    expect((await getJson(`${effectd.url}/v1/whoami`, agent)).status).toBe(200);
    expect(alive(effectd)).toBe(true);
  }, 60_000);

  it('SIGTERM with 10 charges in flight: each is answered done, new connections are refused, exit 0, every effect committed once in the ledger and at the provider', async () => {
    const payments = await startPayments();
    open.push(payments);
    const dataDir = tempDir();
    const effectd = track(await start(dataDir, ['--config', writeFastPaymentsConfig(dataDir, payments.url, 10_000)]));
    await delayCharges(payments, 1_500);

    const commands = Array.from({ length: 10 }, (_, i) => ({ workflowId: `wf-signals-${i}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-SIG-${i}`, amount: 1200 + i } }));
    const answers = Promise.all(commands.map((command) => postJson(`${effectd.url}/v1/effects`, command, authHeaders(dataDir, 'agent'))));
    await waitFor('all 10 charges to be held at the provider', async () => ((await pendingCharges(payments)) === 10 ? true : undefined));

    const sent = Date.now();
    effectd.child.kill('SIGTERM');
    await logged(effectd, /SIGTERM: draining/);
    expect(await tryConnect(effectd.url)).toBe('refused');
    expect(alive(effectd)).toBe(true); // still draining: the provider holds the charges for 1.5 s

    const answered = await answers;
    for (const answer of answered) expect(answer).toMatchObject({ status: 200, body: { status: 'done', state: 'committed' } });
    expect(await effectd.exited).toEqual({ code: 0, signal: null });
    // The answered keep-alive connections are closed at once, not after their 5 s idle timeout.
    expect(Date.now() - sent).toBeLessThan(4_000);
    expect(effectd.output()).toMatch(/drained in \d+ ms; exiting/);

    const ledger = new SqliteLedger(join(dataDir, 'ledger.db'));
    try {
      for (const [i, command] of commands.entries()) {
        const workflow = foldWorkflow((await ledger.readStream(workflowStream('default', command.workflowId))).map((r) => r.event));
        expect(workflow.effects.get(answered[i]!.body.effectId)?.recordedStatus).toBe('committed');
      }
    } finally {
      await ledger.close();
    }
    const truth = await charges(payments);
    expect(truth.map((c) => c.metadata.invoice_id).sort()).toEqual(commands.map((c) => c.args.invoiceId).sort());
    expect(new Set(truth.map((c) => c.id))).toEqual(new Set(answered.map((a) => a.body.receipt)));
  }, 60_000);

  it('a drain that outlasts EFFECTD_DRAIN_TIMEOUT_MS exits 1 and says what was in flight', async () => {
    const payments = await startPayments();
    open.push(payments);
    const dataDir = tempDir();
    const effectd = track(await start(dataDir, ['--config', writeFastPaymentsConfig(dataDir, payments.url, 10_000)], { EFFECTD_DRAIN_TIMEOUT_MS: '300' }));
    await delayCharges(payments, 5_000);
    const answer = postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-slow', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-SLOW', amount: 100 } }, authHeaders(dataDir, 'agent')).catch((error: Error) => error);
    await waitFor('the charge to be held at the provider', async () => ((await pendingCharges(payments)) === 1 ? true : undefined));

    effectd.child.kill('SIGTERM');
    expect(await effectd.exited).toEqual({ code: 1, signal: null });
    expect(effectd.output()).toMatch(/drain timed out after 300 ms .*still in flight: HTTP ingress \(unanswered requests: 1\)/);
    await answer;
  }, 60_000);

  it('a second SIGTERM while draining exits at once with code 1', async () => {
    const payments = await startPayments();
    open.push(payments);
    const dataDir = tempDir();
    const effectd = track(await start(dataDir, ['--config', writeFastPaymentsConfig(dataDir, payments.url, 10_000)]));
    await delayCharges(payments, 5_000);
    const answer = postJson(`${effectd.url}/v1/effects`, { workflowId: 'wf-twice', step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-TWICE', amount: 100 } }, authHeaders(dataDir, 'agent')).catch((error: Error) => error);
    await waitFor('the charge to be held at the provider', async () => ((await pendingCharges(payments)) === 1 ? true : undefined));

    const sent = Date.now();
    effectd.child.kill('SIGTERM');
    await logged(effectd, /SIGTERM: draining/);
    effectd.child.kill('SIGTERM');
    expect(await effectd.exited).toEqual({ code: 1, signal: null });
    expect(Date.now() - sent).toBeLessThan(4_000);
    expect(effectd.output()).toMatch(/second SIGTERM while draining: exiting now with code 1; still in flight: HTTP ingress/);
    await answer;
  }, 60_000);

  it('SIGUSR2 drains like SIGTERM (before: the default killed the process without draining)', async () => {
    const effectd = track(await start(tempDir()));
    effectd.child.kill('SIGUSR2');
    expect(await effectd.exited).toEqual({ code: 0, signal: null });
    expect(effectd.output()).toMatch(/SIGUSR2: draining/);
  }, 30_000);

  it('SIGUSR1 opens no inspector (before: Node listened on 127.0.0.1:9229 for the life of the process); effectd says so and keeps serving', async () => {
    const inspector = 'http://127.0.0.1:9229';
    const before = await tryConnect(inspector);
    const effectd = track(await start(tempDir()));
    effectd.child.kill('SIGUSR1');
    await logged(effectd, /SIGUSR1 ignored: effectd never opens the Node inspector on a signal/);
    // (Only meaningful when nothing else listened there before.)
    if (before === 'refused') expect(await tryConnect(inspector)).toBe('refused');
    expect(alive(effectd)).toBe(true);
    expect((await getJson(`${effectd.url}/healthz`)).status).toBe(200);
  }, 30_000);
});
