import { describe, expect, it } from 'vitest';
import { chooseTarget, FAULT_SPECS, faultApplies } from '../../packages/bench/src/faults.js';
import { planCells } from '../../packages/bench/src/matrix.js';
import type { Observation, Policy, ToolCall } from '../../packages/bench/src/policies/policy.js';
import { Rng } from '../../packages/bench/src/rng.js';
import { DEFAULT_PROFILE, ScriptedAgent, type AgentProfile } from '../../packages/bench/src/scripted-agent.js';
import { scoreCell } from '../../packages/bench/src/scoring.js';
import { DEFAULT_WORKLOADS, workload } from '../../packages/bench/src/workloads.js';
import { parseMinorUnits } from '../../src/core/money.js';

/**
 * A stand-in for effectd's answers to the `charge-respelled` workload (issue 32): the amount is
 * parsed by effectd's own parser, a refusal reads as effectd's; a new step on the invoice while
 * step 1 is done is held ("already done"), unless declared a repeat.
 */
class InvoicePolicy implements Policy {
  readonly name = 'effectd';
  readonly obeysUnknown: boolean = true;
  readonly durableJournal: boolean = true;
  readonly calls: ToolCall[] = [];
  readonly charged: number[] = [];
  private done = false;
  constructor(private readonly first: Observation) {}

  async call(call: ToolCall): Promise<Observation> {
    this.calls.push(call);
    const parsed = parseMinorUnits(call.args.amount, 'usd');
    if (!parsed.ok) return { kind: 'error', ambiguous: false, text: `HTTP 400: invoice INV-x already had payments.charge in step charge-invoice (receipt ch_1). args do not fit tool payments.charge: args.amount: ${parsed.reason}` };
    if (this.calls.length === 1) {
      this.charged.push(parsed.minor);
      this.done = true;
      return this.first;
    }
    if (this.done && !call.repeat) return { kind: 'done', held: true, receipt: 'ch_1', text: 'already done: invoice INV-x already had payments.charge in step charge-invoice (receipt ch_1); nothing was sent' };
    this.charged.push(parsed.minor);
    return { kind: 'done', receipt: `ch_${this.charged.length}`, text: 'done' };
  }

  async settle(): Promise<Observation> {
    return { kind: 'done', receipt: 'ch_1', text: 'done' };
  }
}

const fast: AgentProfile = { ...DEFAULT_PROFILE, thinkMs: [0, 0], restartMs: 0, regenerate: 0 };
const intents = () => workload('charge-respelled')!.intents('t1');

describe('the charge-respelled workload (issue 32)', () => {
  it('is in the default matrix, skips only the retention lie, and its faults hit the first charge', () => {
    const w = workload('charge-respelled')!;
    expect(DEFAULT_WORKLOADS).toContain('charge-respelled');
    expect(faultApplies(FAULT_SPECS['crash-restart'], w)).toBe(true);
    expect(faultApplies(FAULT_SPECS['retention-shorter-than-declared'], w)).toBe(false);
    expect(faultApplies(FAULT_SPECS['retention-shorter-than-declared'], workload('charge')!)).toBe(true);
    const cells = planCells({ workloads: ['charge-respelled'], faults: ['crash-restart', 'retention-shorter-than-declared'], policies: ['blind', 'effectd'], seeds: [1] });
    expect(cells.map((c) => `${c.fault}/${c.policy}`)).toEqual(['crash-restart/blind', 'crash-restart/effectd']);
    // The two intents: the charge the model decides again, and the declared repeat on the same invoice (2 charges allowed).
    const [charge, again] = intents();
    expect(charge).toMatchObject({ id: 'charge', args: { amount: 4900 }, redecideRespelled: { field: 'amount', spelling: '4900' }, multiplicity: 1 });
    expect(again).toMatchObject({ id: 'charge-again', args: { amount: 4900 }, dependsOn: ['charge'], repeat: { reason: expect.any(String) }, multiplicity: 1 });
    expect(again!.identity).toEqual(charge!.identity);
    expect(w.faultTargets).toEqual(['charge']);
    for (let seed = 1; seed <= 5; seed++) expect(chooseTarget(intents().filter((i) => w.faultTargets!.includes(i.id)), new Rng(seed, 'x')).target.id).toBe('charge');
  });

  it('after its first call the model decides again as a new step with "4900", then writes what each refusal states first; held, nothing more is charged; the repeat goes out', async () => {
    const policy = new InvoicePolicy({ kind: 'done', receipt: 'ch_1', text: 'done: payments.charge for invoice INV-x happened (receipt ch_1).' });
    const run = await new ScriptedAgent(policy, new Rng(1, 'agent'), fast, 'wf-1', Date.now() + 5_000, Date.now()).run(intents());
    expect(policy.calls.map((c) => [c.step, c.args.amount, c.repeat?.reason ?? null])).toEqual([
      ['charge-invoice', 4900, null],
      ['charge-invoice~1', '4900', null],
      // The refusal states the smaller reading first: 49.00 USD, what step 1 charged.
      ['charge-invoice~2', '49.00 USD', null],
      ['charge-again', 4900, 'the customer asked for a second charge of this invoice'],
    ]);
    expect(run.transcript.some((t) => /the model decides again \(a new effect, step charge-invoice~1\), writing amount="4900"/.test(t.detail ?? ''))).toBe(true);
    expect(run.outcomes.map((o) => [o.intentId, o.status, o.receipt])).toEqual([['charge', 'done', 'ch_1'], ['charge-again', 'done', 'ch_2']]);
    expect(policy.charged).toEqual([4900, 4900]);
    // Scored as the benchmark does: two charges allowed, two present, nothing false.
    const identity = JSON.stringify(intents()[0]!.identity);
    const score = scoreCell(run.outcomes.map((o, i) => ({ intentId: o.intentId, identity, multiplicity: 1, repeat: i === 1, final: o.status, ...(o.receipt ? { receipt: o.receipt } : {}) })), () => ({ present: policy.charged.length, knownReceipts: ['ch_1', 'ch_2'] }));
    expect(score).toMatchObject({ declared: 2, duplicates: 0, missing: 0, falseDedup: 0 });
  });

  it('a baseline with no ledger charges the copied reading on top of the first charge (a duplicate), and the crash makes the model decide again on resume', async () => {
    /** The same refusals (the same schema), but nothing held: whatever parses is charged. */
    class NoLedger extends InvoicePolicy {
      override readonly durableJournal = false;
      override async call(call: ToolCall): Promise<Observation> {
        this.calls.push(call);
        const parsed = parseMinorUnits(call.args.amount, 'usd');
        if (!parsed.ok) return { kind: 'error', ambiguous: false, text: `HTTP 400: {"error":"invalid arguments for payments.charge: ${parsed.reason.replace(/"/g, '\\"')}"}` };
        this.charged.push(parsed.minor);
        // The first charge is made, and its answer is slow: the agent dies before it comes.
        if (this.calls.length === 1) await new Promise((r) => setTimeout(r, 50));
        return { kind: 'done', receipt: `ch_${this.charged.length}`, text: 'HTTP 200' };
      }
    }
    const policy = new NoLedger({ kind: 'done', text: 'x' });
    const agent = new ScriptedAgent(policy, new Rng(1, 'agent'), fast, 'wf-1', Date.now() + 5_000, Date.now(), {
      // The agent process dies during its first call (crash-restart); it resumes from a checkpoint taken before it.
      beforeCall: (intent, n) => {
        if (intent.id === 'charge' && n === 1) setTimeout(() => agent.crash(), 0);
      },
    });
    const run = await agent.run(intents());
    expect(policy.charged).toEqual([4900, 4900, 4900]);
    expect(run.transcript.map((t) => t.event)).toContain('crash');
    expect(run.transcript.some((t) => /resumed from a checkpoint taken before the call: the model decides again/.test(t.detail ?? ''))).toBe(true);
    expect(policy.calls.map((c) => c.args.amount)).toEqual([4900, '4900', '49.00 USD', 4900]);
  });
});
