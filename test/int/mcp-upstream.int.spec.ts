// An upstream MCP server as a provider: effectd → (the official MCP client SDK) → an MCP server
// written with the server SDK → the payments simulator. The charge carries effectd's key in
// `_meta` and in the named argument, the reference in the named argument; a lost upstream reply
// is unknown and is reconciled through the declared read-only upstream tool (search_charges).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EffectState } from '../../src/core/effect-state.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { deriveReference } from '../../src/core/identity.js';
import { workflowStream } from '../../src/core/streams.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { closeUpstreams } from '../../src/providers/mcp-provider.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, ensureBuilt, getJson, postJson, spawnEffectd, startEffectd, startPayments, tempDir, waitFor, type EffectdProcess, type InProcessEffectd } from '../support/effectd-harness.js';
import { KEY_META, startUpstreamPaymentsMcp, type UpstreamPaymentsMcp } from '../support/upstream-payments-mcp.js';

/** These tests are about the background reconciler: the first answer does not wait for an inline settle (docs/inline-settle.md). */
const atOnce = { prefer: 'wait=0' };

interface Charge { id: string; amount: number; metadata: Record<string, string> }
const charges = async (sim: RunningSimulator) => ((await getJson(`${sim.url}/_oracle/state`)).body as { charges: Charge[] }).charges;

/** Waits until the effect is committed, and checks the provider holds exactly one charge for it, the one recorded. */
async function committedOnce(what: string, effect: () => Promise<EffectState>, payments: RunningSimulator, reference: string): Promise<EffectState> {
  const settled = await waitFor(what, async () => {
    const state = await effect();
    return state.recordedStatus === 'committed' ? state : undefined;
  }, 15_000, 50);
  const atProvider = (await charges(payments)).filter((c) => c.metadata.effectd_ref === reference);
  expect(atProvider).toHaveLength(1);
  expect(settled.receipt).toBe(atProvider[0]!.id);
  return settled;
}

/** The config an operator writes: the upstream server as a provider, its create_charge mapped to a contract. */
function upstreamConfig(dir: string, upstreams: Record<string, unknown>, overrides: { timeoutMs?: number } = {}, extraTools: Record<string, unknown>[] = []): string {
  const file = join(dir, `upstream-mcp.${Date.now()}.${Math.random().toString(36).slice(2, 6)}.json`);
  writeFileSync(file, JSON.stringify({
    builtinTools: false,
    providers: Object.fromEntries(Object.entries(upstreams).map(([name, mcp]) => [name, { mcp }])),
    tools: Object.keys(upstreams).map((provider) => ({
      name: provider === 'pay-mcp' ? 'upstream.charge' : `${provider.replace(/-mcp$/, '')}.charge`,
      description: 'Charge an invoice through the upstream payments MCP server.',
      provider,
      mcp: {
        tool: 'create_charge',
        arguments: { amount: '{args.amount}', currency: '{args.currency}', description: 'invoice {args.invoiceId}' },
        keyArgument: 'idempotency_key',
        referenceArgument: 'reference',
        receiptPath: 'structuredContent.id',
        lookup: { tool: 'search_charges', arguments: { reference: '{ref}' }, resultsPath: 'structuredContent.charges', receiptPath: 'id' },
      },
      args: {
        invoiceId: { type: 'string', minLength: 1 },
        amount: { type: 'money', currencyField: 'currency' },
        currency: { type: 'currency', default: 'usd' },
      },
      target: 'invoice {args.invoiceId}',
      // The upstream says read-only and idempotent; the contract knows a charge is neither.
      reversibility: 'compensable',
      businessFields: ['invoiceId', 'amount', 'currency'],
      idempotency: { kind: 'meta', retentionMs: 86_400_000 },
      timeoutMs: overrides.timeoutMs ?? 3_000,
      // Long enough that reconciliation here is by lookup, never a same-key resend.
      settleWindowMs: 60_000,
    })).concat(extraTools as never[]),
  }));
  return file;
}

/** The same upstream tool with no lookup: a lost reply is settled by a same-key resend (the upstream dedupes by the key). */
const keyedOnly = {
  name: 'upstream.charge-keyed', provider: 'pay-mcp',
  mcp: { tool: 'create_charge', arguments: { amount: '{args.amount}', currency: '{args.currency}' }, referenceArgument: 'reference', receiptPath: 'structuredContent.id' },
  args: { invoiceId: { type: 'string', minLength: 1 }, amount: { type: 'money', currencyField: 'currency' }, currency: { type: 'currency', default: 'usd' } },
  target: 'invoice {args.invoiceId}', reversibility: 'compensable',
  idempotency: { kind: 'meta', retentionMs: 86_400_000 }, timeoutMs: 3_000, settleWindowMs: 200,
};

const command = (workflowId: string, invoiceId: string, tool = 'upstream.charge') => ({ workflowId, step: 'charge', tool, args: { invoiceId, amount: '49.00 USD' } });

describe('an upstream MCP server as a provider (in-process effectd)', () => {
  let payments: RunningSimulator;
  let upstream: UpstreamPaymentsMcp;
  let effectd: InProcessEffectd;

  beforeAll(async () => {
    payments = await startPayments({ searchLagMs: 0 });
    upstream = await startUpstreamPaymentsMcp({ paymentsUrl: payments.url });
    const dataDir = tempDir();
    // dead-mcp: nothing listens there (connection refused).
    effectd = await startEffectd({ dataDir, configFile: upstreamConfig(dataDir, { 'pay-mcp': { url: upstream.url }, 'dead-mcp': { url: 'http://127.0.0.1:9/mcp' } }, {}, [keyedOnly]) });
  });
  afterEach(async () => {
    upstream.set({ delayMs: 0, dropRepliesAfterCharge: 0 });
    await postJson(`${payments.url}/_admin/faults`, { rules: [] });
  });
  afterAll(async () => {
    await effectd?.close();
    await closeUpstreams();
    await upstream?.close();
    await payments?.close();
  });

  const effectOf = async (workflowId: string): Promise<EffectState> => {
    const workflow = await effectd.runtime.shell.core.read(workflowStream('default', workflowId));
    return [...workflow.effects.values()][0]!;
  };

  it('a charge is done with the upstream receipt; the key went in _meta and the named argument, the reference in its argument, the call recorded for resends', async () => {
    const answer = await postJson(`${effectd.url}/v1/effects`, command('wf-up-plain', 'INV-UP-1'), effectd.agent);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'done', state: 'committed', receipt: expect.stringMatching(/^ch_/) });

    const reference = deriveReference(answer.body.effectId);
    const atProvider = (await charges(payments)).filter((c) => c.metadata.effectd_ref === reference);
    expect(atProvider).toHaveLength(1);
    expect(atProvider[0]!).toMatchObject({ id: answer.body.receipt, amount: 4900 });

    const call = upstream.calls.at(-1)!;
    const effect = await effectOf('wf-up-plain');
    const started = effect.attempts[0]!.started;
    expect(started.providerKey).toEqual(expect.any(String));
    expect(call.meta?.[KEY_META]).toBe(started.providerKey);
    expect(call.arguments).toMatchObject({ amount: 4900, currency: 'usd', description: 'invoice INV-UP-1', reference, idempotency_key: started.providerKey });
    expect(started.request).toMatchObject({ method: 'MCP', path: 'create_charge' });
    expect(JSON.parse(started.request!.body)).toEqual(call.arguments);
  });

  it('the upstream\'s annotations are not trusted: effectd\'s /mcp lists the tool with the contract\'s (a charge is not read-only)', async () => {
    const client = new Client({ name: 'effectd-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${effectd.url}/mcp`), { requestInit: { headers: effectd.agent } }));
    try {
      const { tools } = await client.listTools();
      const charge = tools.find((t) => t.name === 'upstream_charge')!;
      // The upstream says readOnlyHint: true, idempotentHint: true.
      expect(charge.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    } finally {
      await client.close();
    }
  });

  it.each([
    ['the provider commits and its reply to the upstream is lost (simulator drop-after-mutation)', 'sim'],
    ['the upstream commits and drops its own reply to effectd', 'upstream'],
  ] as const)('post-commit loss, %s → unknown, then reconciled through search_charges → committed, one charge', async (_, where) => {
    const workflowId = `wf-up-loss-${where}`;
    if (where === 'sim') await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    else upstream.set({ dropRepliesAfterCharge: 1 });
    const callsBefore = upstream.calls.length;

    const first = await postJson(`${effectd.url}/v1/effects`, command(workflowId, `INV-UP-LOSS-${where}`), { ...effectd.agent, ...atOnce });
    expect(first.body).toMatchObject({ status: 'unknown', reference: expect.any(String) });

    const settled = await committedOnce('the reconciler to settle the effect', () => effectOf(workflowId), payments, first.body.reference);
    // Reconciled by the lookup tool, not by a second create_charge.
    expect(upstream.calls.length - callsBefore).toBe(1);
    expect(settled.attempts).toHaveLength(1);
    expect(settled.attempts[0]!.finished).toMatchObject({ outcome: 'unknown', reason: expect.stringMatching(/^no answer: /) });
    console.log(`[mcp upstream] lost reply (${where}): ${settled.attempts[0]!.finished!.reason}; then ${settled.checks.at(-1)!.asked} → ${settled.checks.at(-1)!.seen}`);
    expect(settled.checks.at(-1)).toMatchObject({ method: 'lookup-by-reference', verdict: 'committed', receipt: settled.receipt, asked: expect.stringContaining('search_charges') });

    // The agent asking again gets the settled answer (a replay, no call upstream).
    const again = await postJson(`${effectd.url}/v1/effects`, command(workflowId, `INV-UP-LOSS-${where}`), effectd.agent);
    expect(again.body).toMatchObject({ status: 'done', receipt: settled.receipt, replayed: true });
    expect(upstream.calls.length - callsBefore).toBe(1);
  });

  it('an isError result from the upstream is a refusal: not_done, safe to try again as a new step', async () => {
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } } } }] });
    const answer = await postJson(`${effectd.url}/v1/effects`, command('wf-up-refused', 'INV-UP-REF'), effectd.agent);
    expect(answer.body).toMatchObject({ status: 'not_done', state: 'failed_before_effect' });
    // Worded as what came back over MCP, never as an HTTP status the upstream did not send.
    expect((await effectOf('wf-up-refused')).attempts[0]!.finished?.reason).toMatch(/^refused with an isError result of the upstream MCP tool: .*card_declined/);
  });

  it('a tool with no lookup: the lost reply is settled by a same-key resend of the recorded call, which the upstream dedupes: one charge', async () => {
    upstream.set({ dropRepliesAfterCharge: 1 });
    const callsBefore = upstream.calls.length;
    const first = await postJson(`${effectd.url}/v1/effects`, command('wf-up-keyed', 'INV-UP-KEYED', 'upstream.charge-keyed'), { ...effectd.agent, ...atOnce });
    expect(first.body).toMatchObject({ status: 'unknown' });
    const settled = await committedOnce('the resend to settle it', () => effectOf('wf-up-keyed'), payments, first.body.reference);
    expect(settled.attempts).toHaveLength(2);
    const [sent, resent] = upstream.calls.slice(callsBefore);
    expect(upstream.calls.length - callsBefore).toBe(2);
    expect(resent!.arguments).toEqual(sent!.arguments);
    expect(resent!.meta?.[KEY_META]).toBe(sent!.meta?.[KEY_META]);
    expect(settled.attempts[1]!.started.request).toEqual(settled.attempts[0]!.started.request);
  });

  it('an upstream that refuses the connection was never called: not_done, never sent', async () => {
    const answer = await postJson(`${effectd.url}/v1/effects`, command('wf-up-dead', 'INV-UP-DEAD', 'dead.charge'), effectd.agent);
    expect(answer.body).toMatchObject({ status: 'not_done', state: 'failed_before_effect' });
    expect((await effectOf('wf-up-dead')).attempts[0]!.finished).toMatchObject({ neverSent: true, reason: expect.stringMatching(/never sent: cannot reach the upstream MCP server of dead-mcp/) });
  });

  it('a timeout waiting for the upstream is unknown, and the late commit is found by search_charges', async () => {
    upstream.set({ delayMs: 3_500 });
    const callsBefore = upstream.calls.length;
    const first = await postJson(`${effectd.url}/v1/effects`, command('wf-up-timeout', 'INV-UP-TO'), { ...effectd.agent, ...atOnce });
    expect(first.body).toMatchObject({ status: 'unknown' });
    expect((await effectOf('wf-up-timeout')).attempts[0]!.finished?.reason).toMatch(/no answer/);
    const settled = await committedOnce('the late commit to be found', () => effectOf('wf-up-timeout'), payments, first.body.reference);
    expect(upstream.calls.length - callsBefore).toBe(1);
  });
});

describe('an upstream MCP server over stdio (a child process effectd starts)', () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;
  let dieMarker: string;

  beforeAll(async () => {
    payments = await startPayments({ searchLagMs: 0 });
    const dataDir = tempDir();
    dieMarker = join(dataDir, 'die-after-charge');
    const stdio = {
      command: process.execPath,
      args: [join(import.meta.dirname, '..', 'support', 'upstream-payments-mcp-stdio.mjs')],
      env: { PATH: process.env.PATH ?? '', UPSTREAM_PAYMENTS_URL: payments.url, UPSTREAM_DIE_AFTER_CHARGE: dieMarker },
      cwd: process.cwd(),
    };
    effectd = await startEffectd({ dataDir, configFile: upstreamConfig(dataDir, { 'pay-mcp': stdio }) });
  });
  afterAll(async () => {
    await effectd?.close();
    await closeUpstreams();
    await payments?.close();
  });
  const effectOf = async (workflowId: string): Promise<EffectState> => [...(await effectd.runtime.shell.core.read(workflowStream('default', workflowId))).effects.values()][0]!;

  it('a charge through the child is done with its receipt', async () => {
    const answer = await postJson(`${effectd.url}/v1/effects`, command('wf-stdio-plain', 'INV-STDIO-1'), effectd.agent);
    expect(answer.body).toMatchObject({ status: 'done', receipt: expect.stringMatching(/^ch_/) });
    expect((await charges(payments)).filter((c) => c.metadata.effectd_ref === deriveReference(answer.body.effectId))).toHaveLength(1);
  });

  it('the child dies after the charge committed → unknown; a new child answers search_charges → committed, one charge', async () => {
    writeFileSync(dieMarker, '');
    const first = await postJson(`${effectd.url}/v1/effects`, command('wf-stdio-die', 'INV-STDIO-DIE'), { ...effectd.agent, ...atOnce });
    expect(first.body).toMatchObject({ status: 'unknown' });
    const settled = await committedOnce('the reconciler to settle it', () => effectOf('wf-stdio-die'), payments, first.body.reference);
    expect(settled.attempts).toHaveLength(1);
    expect(settled.checks.at(-1)).toMatchObject({ verdict: 'committed', asked: expect.stringContaining('search_charges') });
  });
});

describe('an upstream MCP server as a provider: effectd SIGKILLed mid-call', () => {
  beforeAll(ensureBuilt, 180_000);
  const open: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    while (open.length) await open.pop()!.close();
  });

  it('the charge commits upstream after effectd died; the restarted effectd reconciles it through search_charges: one charge', async () => {
    const payments = await startPayments({ searchLagMs: 0 });
    open.push(payments);
    const upstream = await startUpstreamPaymentsMcp({ paymentsUrl: payments.url, delayMs: 1_500 });
    open.push(upstream);
    const dataDir = tempDir();
    const configFile = upstreamConfig(dataDir, { 'pay-mcp': { url: upstream.url } }, { timeoutMs: 2_000 });
    const start = async (): Promise<EffectdProcess> => {
      const effectd = await spawnEffectd(['--data-dir', dataDir, '--config', configFile]);
      open.push({ close: () => effectd.kill('SIGKILL') });
      return effectd;
    };

    const first = await start();
    const agent = authHeaders(dataDir, 'agent');
    const submitted = postJson(`${first.url}/v1/effects`, command('wf-up-kill', 'INV-UP-KILL'), agent).catch((error: unknown) => error);
    await waitFor('the upstream to receive create_charge', async () => (upstream.calls.length === 1 ? true : undefined), 10_000, 10);
    await first.kill('SIGKILL');
    expect(await submitted).toBeInstanceOf(Error);
    // The upstream finishes the charge after effectd is gone.
    await waitFor('the charge to commit at the provider', async () => ((await charges(payments)).length === 1 ? true : undefined), 10_000, 50);

    const second = await start();
    const ledger = new SqliteLedger(join(dataDir, 'ledger.db'));
    open.push({ close: () => ledger.close() });
    const settled = await waitFor('the restarted effectd to reconcile the effect', async () => {
      const workflow = foldWorkflow((await ledger.readStream(workflowStream('default', 'wf-up-kill'))).map((r) => r.event));
      const effect = [...workflow.effects.values()][0];
      return effect?.recordedStatus === 'committed' ? effect : undefined;
    }, 20_000, 100);

    const atProvider = await charges(payments);
    expect(atProvider).toHaveLength(1);
    expect(atProvider[0]!.metadata.effectd_ref).toBeDefined();
    expect(settled.receipt).toBe(atProvider[0]!.id);
    expect(settled.attempts).toHaveLength(1);
    expect(settled.checks.at(-1)).toMatchObject({ method: 'lookup-by-reference', verdict: 'committed', asked: expect.stringContaining('search_charges') });
    // No second create_charge: the lookup tool settled it.
    expect(upstream.calls).toHaveLength(1);

    const again = await postJson(`${second.url}/v1/effects`, command('wf-up-kill', 'INV-UP-KILL'), agent);
    expect(again.body).toMatchObject({ status: 'done', receipt: atProvider[0]!.id });
    await second.kill('SIGKILL');
  }, 60_000);
});
