import { readFileSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';
import { testPostgresUrl } from '../support/services.js';
import { startHoldingProxy } from '../support/holding-proxy.js';

/**
 * A request that reaches a slow provider late (docs/design.md, "Reconciliation"; the settle window
 * counts from `settleFrom`, src/core/reconcile-schedule.ts): a TCP proxy holds the first mutating
 * request's bytes for HOLD_MS, longer than the tool's timeout and longer than the settle window
 * counted from the DISPATCH, then hands them to the real simulator, which commits at once; the reply
 * is swallowed. effectd records `unknown`; the agent decides again (the bench's effectd+redecide:
 * a new step of the same content, answers at once with `Prefer: wait=0`), which the content index
 * holds; the reconciler's consistent lookup must not "prove" the first step absent before the
 * request could have committed, or the held step is released and the provider holds two charges.
 *
 * The contracts have no key (or one that would not protect) and a consistent lookup, so "not found
 * after the settle window" is a proof of absence: payments.charge re-declared that way against a
 * search with no lag, and the built-in weak.append-line (a journal line found by its reference).
 *
 * The first describe is the settle-window anchor (passes with settleFrom = the attempt's finish; two
 * charges when it counts from the dispatch). The two after it were duplicates this test found, now
 * rules of src/core/reconcile-schedule.ts: a lookup with no answer proves nothing (`unanswered`),
 * and a look counts from when it was ASKED (`askedAt`), not from when its answer arrived.
 * (It also found the bench's HTTP lanes sharing one PostgreSQL ledger with other providers behind
 * each: effectd's rule is that every instance on a ledger reaches the same providers, so the bench
 * now gives each configuration its own schema, packages/bench/src/lane-ledger.ts.)
 */
const TIMEOUT_MS = 1_000;
const SETTLE_WINDOW_MS = 1_000;
/** Past dispatch + window (1000 ms) by 500 ms; inside finish (≈ dispatch + 1000 ms) + window by 500 ms. */
const HOLD_MS = 1_500;
const POLL_MS = 100;

type Ledger = 'sqlite' | 'postgres';
interface ToolCase {
  tool: string;
  provider: 'payments' | 'weak';
  mutation: string;
  args: (n: number) => Record<string, unknown>;
  /** The provider's own record of what happened (its oracle state). */
  committed: (oracle: any) => { receipt?: string }[];
}

const TOOLS: ToolCase[] = [
  {
    tool: 'payments.charge', provider: 'payments', mutation: 'POST /v1/charges ',
    args: (n) => ({ invoiceId: `INV-LATE-${process.pid}-${n}`, amount: 4900 }),
    committed: (oracle) => (oracle.charges as { id: string }[]).map((c) => ({ receipt: c.id })),
  },
  {
    tool: 'weak.append-line', provider: 'weak', mutation: 'POST /append-line ',
    args: (n) => ({ file: `late-${process.pid}-${n}.log`, about: `ORD-${n} handed to the carrier`, line: `ORD-${n} handed to the carrier` }),
    committed: (oracle) => (oracle.lines as { file: string; lineNumber: number }[]).map(() => ({})),
  },
];

let n = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const atOnce = { prefer: 'wait=0' };

/** A fresh PostgreSQL schema per test (dropped afterwards). */
function freshSchema(): { url: string; drop(): Promise<void> } {
  const schema = `t_late_${process.pid}_${Date.now().toString(36)}_${++n}`;
  const base = testPostgresUrl();
  return {
    url: `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`,
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

/** A config file with the tool's contract re-declared: no key, a consistent lookup, short timings. */
function contractFile(dir: string, c: ToolCase, providerUrl: string, settleWindowMs = SETTLE_WINDOW_MS): string {
  const configFile = writeToolsConfig(dir, { [c.provider]: providerUrl }, { [c.tool]: { timeoutMs: TIMEOUT_MS, settleWindowMs } });
  // writeToolsConfig merges objects; a contract with no key replaces the idempotency block whole.
  const config = JSON.parse(readFileSync(configFile, 'utf8'));
  const tool = config.tools.find((t: { name: string }) => t.name === c.tool);
  tool.idempotency = { kind: 'none' };
  tool.lookup.consistent = true;
  writeFileSync(configFile, JSON.stringify(config));
  return configFile;
}

async function startSim(c: ToolCase): Promise<RunningSimulator> {
  const sim = await startSimulator(c.provider, c.provider === 'payments' ? { options: { searchLagMs: 0 } } : {});
  open.push(sim);
  return sim;
}

function ledgerUrlFor(ledger: Ledger): string | undefined {
  if (ledger === 'sqlite') return undefined;
  const schema = freshSchema();
  open.push({ close: () => schema.drop() });
  return schema.url;
}

async function setup(c: ToolCase, ledger: Ledger, settleWindowMs = SETTLE_WINDOW_MS) {
  const sim = await startSim(c);
  const proxy = await startHoldingProxy(sim.url);
  open.push(proxy);
  const dataDir = tempDir();
  const ledgerUrl = ledgerUrlFor(ledger);
  const effectd = await startEffectd({ dataDir, configFile: contractFile(dataDir, c, proxy.url, settleWindowMs), ...(ledgerUrl ? { ledgerUrl } : {}) });
  open.push(effectd);
  return { sim, proxy, effectd, ledgerUrl };
}

const searchPath = (c: ToolCase) => (c.provider === 'payments' ? '/v1/charges/search' : '/append-line/search');
const arm = (sim: RunningSimulator, rules: unknown[]) => postJson(`${sim.url}/_admin/faults`, { rules });
const effect = async (effectd: Pick<InProcessEffectd, 'url' | 'agent'>, effectId: string) => (await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.agent)).body;
const timelineOf = async (effectd: Pick<InProcessEffectd, 'url' | 'agent'>, workflowId: string) =>
  (await getJson(`${effectd.url}/v1/workflows/${workflowId}`, effectd.agent)).body.timeline as { type: string; event: Record<string, any> }[];
const mutationsAt = async (sim: RunningSimulator, c: ToolCase) =>
  ((await getJson(`${sim.url}/_admin/requests`)).body.requests as { method: string; path: string }[]).filter((r) => `${r.method} ${r.path} `.startsWith(c.mutation));

/**
 * The bench's EffectdPolicy.settle for a held step: poll it; `done` ends; held against a step
 * that proved not to have happened → resubmit it (effectd then releases and sends it).
 */
async function settleHeld(effectd: Pick<InProcessEffectd, 'url' | 'agent'>, command: Record<string, unknown>, effectId: string, deadline: number) {
  let last: any;
  let resubmitted = 0;
  const began = Date.now();
  const out = (exit: string) => ({ last, resubmitted, exit: `${exit} after ${Date.now() - began} ms` });
  while (Date.now() < deadline) {
    await sleep(POLL_MS);
    last = await effect(effectd, effectId);
    if (last.status === 'done' || last.status === 'not_done' || ['committed', 'failed_before_effect'].includes(last.state)) return out('settled');
    if (last.state === 'held' && /which is failed_before_effect/.test(last.reason ?? '')) {
      resubmitted += 1;
      const again = await postJson(`${effectd.url}/v1/effects`, command, { ...effectd.agent, ...atOnce });
      last = again.body;
      if (last.status !== 'unknown') return out('released');
    }
  }
  return out('deadline');
}

/** Step 1 (answer at once), then the model decides again: step 2 of the same content, which the content index holds. */
async function submitAndRedecide(effectd: Pick<InProcessEffectd, 'url' | 'agent'>, c: ToolCase, workflowId: string, args: Record<string, unknown>) {
  const first = await postJson(`${effectd.url}/v1/effects`, { workflowId, step: 1, tool: c.tool, args }, { ...effectd.agent, ...atOnce });
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ status: 'unknown' });
  const redecided = { workflowId, step: 2, tool: c.tool, args };
  const second = await postJson(`${effectd.url}/v1/effects`, redecided, { ...effectd.agent, ...atOnce });
  expect(second.status).toBe(200);
  expect(second.body).toMatchObject({ state: 'held', status: 'unknown' });
  return { originalId: first.body.effectId as string, heldId: second.body.effectId as string, redecided };
}

describe.each<Ledger>(['sqlite', 'postgres'])('a request that reaches the provider after the settle window counted from dispatch (%s ledger)', (ledger) => {
  for (const c of TOOLS) {
    it(`${c.tool}: held ${HOLD_MS} ms in transit, committed late; the re-decision stays held and ends done with the one ${c.provider === 'payments' ? 'charge' : 'line'}`, async () => {
      const { sim, proxy, effectd } = await setup(c, ledger);
      const workflowId = `wf-late-${ledger}-${process.pid}-${++n}`;
      const args = c.args(n);
      const mutation = c.mutation;
      proxy.holdNext((line) => line.startsWith(mutation), HOLD_MS);

      const { originalId, heldId, redecided } = await submitAndRedecide(effectd, c, workflowId, args);

      const { last, resubmitted, exit } = await settleHeld(effectd, redecided, heldId, Date.now() + TIMEOUT_MS + SETTLE_WINDOW_MS + HOLD_MS + 4_000);
      await proxy.drained();
      const original = await waitFor('the first step to settle', async () => {
        const e = await effect(effectd, originalId);
        return ['committed', 'failed_before_effect', 'escalated'].includes(e.state) ? e : undefined;
      }, 10_000, 50);
      await sleep(300); // let a release that is on its way reach the provider

      // The provider's own records: exactly one.
      const oracle = (await getJson(`${sim.url}/_oracle/state`)).body;
      const truth = c.committed(oracle);
      const log = await mutationsAt(sim, c);
      const timeline = await timelineOf(effectd, workflowId);
      const started = timeline.find((e) => e.type === 'AttemptStarted' && e.event.effectId === originalId)!.event;
      const finished = timeline.find((e) => e.type === 'AttemptFinished' && e.event.effectId === originalId)!.event;
      const [hold] = proxy.held;
      const report = {
        ledger, tool: c.tool, committed: truth.length, providerPosts: log.length, resubmitted, exit,
        original: { state: original.state, receipt: original.receipt }, held: { state: last?.state, status: last?.status, receipt: last?.receipt },
        dispatchedAt: started.at, finishedAt: finished.at, forwardedAt: hold?.forwardedAt, repliedAt: hold?.repliedAt, reply: hold?.replyStatusLine,
        forwardedAfterDispatchMs: hold?.forwardedAt !== undefined ? hold.forwardedAt - started.at : undefined,
        checks: timeline.filter((e) => e.type === 'ReconciliationChecked' && e.event.effectId === originalId).map((e) => `${e.event.at - started.at}ms:${e.event.verdict}`),
      };
      console.log(JSON.stringify(report));

      // The scenario happened as intended: the provider got the request only after dispatch + window,
      // but before the window counted from the moment effectd gave up (finish + window).
      // (A stall of this process longer than ~500 ms moves the scenario out of that range: it fails here, not silently.)
      expect(proxy.held).toHaveLength(1);
      expect(hold!.forwardedAt! - started.at, `the request reached the provider after dispatch + settle window (${JSON.stringify(report)})`).toBeGreaterThan(SETTLE_WINDOW_MS);
      expect(hold!.repliedAt! - finished.at, `the provider committed it within the settle window counted from the attempt's finish (${JSON.stringify(report)})`).toBeLessThan(SETTLE_WINDOW_MS);
      expect(hold!.replyStatusLine).toMatch(/^HTTP\/1\.1 200/);

      expect(truth, `the provider holds exactly one (${JSON.stringify(report)})`).toHaveLength(1);
      expect(log, 'only the first step was ever sent').toHaveLength(1);
      expect(resubmitted, 'the held step was never released').toBe(0);
      expect(original.state).toBe('committed');
      expect(last).toMatchObject({ status: 'done' });
      if (c.provider === 'payments') {
        expect(original.receipt).toBe(truth[0]!.receipt);
        expect(last.receipt).toBe(truth[0]!.receipt);
      }
    }, 30_000);
  }
});

/**
 * Found by this test (two charges before the fix): a lookup that got no answer was counted as a look
 * that saw nothing. The reconciler recorded a lookup that timed out (or answered 5xx, or was
 * refused) as a `pending` check like a real "0 matches" (src/shell/provider-checks.ts, lookUp()), and
 * nextLookup() (src/core/reconcile-schedule.ts) counted every check after the window's end as the
 * last look, whatever it saw: a consistent contract then "proved" absence (`not_committed`) without
 * a single answer from the provider. Now such a check is `unanswered`, asked again with backoff, and
 * escalated after MAX_UNANSWERED_LOOKS. Here the charge committed (its reply was lost) and every
 * lookup times out (a loaded provider): the effect must not be proven absent, and the held
 * re-decision must stay held.
 */
describe.each<Ledger>(['sqlite', 'postgres'])('a lookup that got no answer proves nothing (%s ledger)', (ledger) => {
  for (const c of TOOLS) {
    it(`${c.tool}: committed, reply lost, every lookup times out; the re-decision stays held, one ${c.provider === 'payments' ? 'charge' : 'line'}`, async () => {
      const { sim, effectd } = await setup(c, ledger);
      await arm(sim, [
        { match: { method: 'POST', pathPrefix: c.mutation.split(' ')[1], nth: 1 }, action: { type: 'drop-after-mutation' } },
        // Every lookup is answered only after effectd's timeout: a provider too loaded to answer reads in time.
        { match: { method: 'GET', pathPrefix: searchPath(c), times: 1_000 }, action: { type: 'delay', ms: TIMEOUT_MS + 700 } },
      ]);
      const workflowId = `wf-nolook-${ledger}-${process.pid}-${++n}`;
      const { originalId, heldId, redecided } = await submitAndRedecide(effectd, c, workflowId, c.args(n));
      const { last, resubmitted, exit } = await settleHeld(effectd, redecided, heldId, Date.now() + SETTLE_WINDOW_MS + 3 * TIMEOUT_MS + 1_500);
      await sleep(300);
      const original = await effect(effectd, originalId);
      const truth = c.committed((await getJson(`${sim.url}/_oracle/state`)).body);
      const checks = (await timelineOf(effectd, workflowId)).filter((e) => e.type === 'ReconciliationChecked' && e.event.effectId === originalId).map((e) => `${e.event.verdict}: ${e.event.seen}`);
      const report = { ledger, tool: c.tool, committed: truth.length, providerPosts: (await mutationsAt(sim, c)).length, resubmitted, exit, original: original.state, held: { state: last?.state, status: last?.status }, checks };
      console.log(JSON.stringify(report));
      expect(checks.length, 'effectd tried to look it up').toBeGreaterThan(0);
      expect(original.state, `no answer is no proof of absence (${JSON.stringify(report)})`).not.toBe('failed_before_effect');
      expect(truth, `the provider holds exactly one (${JSON.stringify(report)})`).toHaveLength(1);
      expect(resubmitted).toBe(0);
    }, 30_000);
  }
});

/**
 * Found by this test (two charges before the fix): a check was stamped with the time its ANSWER came
 * back (src/shell/reconciler.ts, lookup(): `at: this.core.now()` after the HTTP call), and
 * nextLookup() took a check stamped at or after the window's end as the last look. A lookup asked
 * before the window ended but answered after it (a slow way back: a loaded effectd or provider) is
 * then the "final look", though the provider answered it as of a moment inside the window. Now a
 * look counts from its `askedAt`. Here the
 * charge commits inside the window (finish + 2000 ms), after the lookup that becomes the final one was
 * answered by the provider; every lookup's reply takes 900 ms to come back (within the timeout).
 */
describe.each<Ledger>(['sqlite', 'postgres'])('a lookup asked before the window ended but answered after it is not the last look (%s ledger)', (ledger) => {
  const WINDOW_MS = 2_000;
  const REPLY_DELAY_MS = 900;
  /** finish ≈ 1000; looks asked ≈ 1050 (answered ≈ 1950), ≈ 2200 (answered ≈ 3100 ≥ finish + window = 3000): commit between them. */
  const COMMIT_AT_MS = 2_600;
  for (const c of TOOLS) {
    it(`${c.tool}: commits at dispatch + ${COMMIT_AT_MS} ms, inside the window; the re-decision stays held, one ${c.provider === 'payments' ? 'charge' : 'line'}`, async () => {
      const { sim, proxy, effectd } = await setup(c, ledger, WINDOW_MS);
      proxy.holdNext((line) => line.startsWith(c.mutation), COMMIT_AT_MS);
      proxy.delayReplies((line) => line.startsWith(`GET ${searchPath(c)}`), REPLY_DELAY_MS);
      const workflowId = `wf-slowlook-${ledger}-${process.pid}-${++n}`;
      const { originalId, heldId, redecided } = await submitAndRedecide(effectd, c, workflowId, c.args(n));
      const { last, resubmitted, exit } = await settleHeld(effectd, redecided, heldId, Date.now() + WINDOW_MS + COMMIT_AT_MS + 3_000);
      await proxy.drained();
      await sleep(300);
      const original = await effect(effectd, originalId);
      const truth = c.committed((await getJson(`${sim.url}/_oracle/state`)).body);
      const timeline = await timelineOf(effectd, workflowId);
      const started = timeline.find((e) => e.type === 'AttemptStarted' && e.event.effectId === originalId)!.event;
      const finished = timeline.find((e) => e.type === 'AttemptFinished' && e.event.effectId === originalId)!.event;
      const [hold] = proxy.held;
      const report = {
        ledger, tool: c.tool, committed: truth.length, resubmitted, exit, original: original.state, held: { state: last?.state, status: last?.status },
        finishedAfterDispatchMs: finished.at - started.at, committedAfterDispatchMs: hold?.repliedAt !== undefined ? hold.repliedAt - started.at : undefined,
        windowEndsAfterDispatchMs: finished.at + WINDOW_MS - started.at,
        checks: timeline.filter((e) => e.type === 'ReconciliationChecked' && e.event.effectId === originalId).map((e) => `${e.event.at - started.at}ms:${e.event.verdict}`),
      };
      console.log(JSON.stringify(report));
      // The provider kept the contract: it committed inside the window counted from the finish.
      expect(hold!.repliedAt! - finished.at, `committed inside the settle window (${JSON.stringify(report)})`).toBeLessThan(WINDOW_MS);
      expect(original.state, `a look answered as of a moment inside the window proves nothing (${JSON.stringify(report)})`).not.toBe('failed_before_effect');
      expect(truth, `the provider holds exactly one (${JSON.stringify(report)})`).toHaveLength(1);
      expect(resubmitted).toBe(0);
    }, 30_000);
  }
});
