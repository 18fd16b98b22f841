import { describe, expect, it } from 'vitest';
import type { Observation, Policy, ToolCall } from '../../packages/bench/src/policies/policy.js';
import { Rng } from '../../packages/bench/src/rng.js';
import { DEFAULT_PROFILE, ScriptedAgent, type AgentProfile } from '../../packages/bench/src/scripted-agent.js';
import { workload } from '../../packages/bench/src/workloads.js';

/** A policy that answers from a script and records every call the agent made. */
class ScriptedPolicy implements Policy {
  readonly name = 'effectd';
  readonly calls: ToolCall[] = [];
  settles = 0;
  constructor(readonly obeysUnknown: boolean, private readonly answers: Observation[], private readonly settled: Observation = { kind: 'done', receipt: 'ch_1', text: 'done' }) {}
  readonly durableJournal = true;
  async call(call: ToolCall): Promise<Observation> {
    this.calls.push(call);
    return this.answers[this.calls.length - 1] ?? { kind: 'done', receipt: 'ch_1', text: 'done' };
  }
  async settle(): Promise<Observation> {
    this.settles += 1;
    return this.settled;
  }
}

const fast = (overrides: Partial<AgentProfile> = {}): AgentProfile => ({ ...DEFAULT_PROFILE, thinkMs: [0, 0], restartMs: 0, ...overrides });
const unknown: Observation = { kind: 'unknown', effectId: 'eff_1', state: 'unknown', text: 'unknown: … Do not start another payments.charge' };
const charge = () => workload('charge')!.intents('t1');
const agent = (policy: Policy, seed: number, profile: AgentProfile) => new ScriptedAgent(policy, new Rng(seed, 'agent'), profile, 'wf-1', Date.now() + 5_000, Date.now());

describe('the scripted agent', () => {
  it('behaves the same for the same seed and the same answers', async () => {
    const run = async () => {
      const policy = new ScriptedPolicy(false, [{ kind: 'error', ambiguous: true, text: 'timeout' }, { kind: 'error', ambiguous: true, text: 'timeout' }, { kind: 'error', ambiguous: false, text: 'HTTP 400' }]);
      const result = await agent(policy, 3, fast()).run(charge());
      return { calls: policy.calls.map((c) => [c.step, c.args]), events: result.transcript.map((t) => [t.event, t.detail]) };
    };
    expect(await run()).toEqual(await run());
  });

  it('under an obedient harness it never starts another effect on unknown: it waits for the settled answer', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const policy = new ScriptedPolicy(true, [unknown, unknown, unknown]);
      const { outcomes } = await agent(policy, seed, fast({ redecideOnUnknown: 0 })).run(charge());
      expect(new Set(policy.calls.map((c) => c.step))).toEqual(new Set(['charge-invoice']));
      expect(policy.settles).toBe(1);
      expect(outcomes[0]).toMatchObject({ status: 'done', receipt: 'ch_1', steps: ['charge-invoice'] });
    }
  });

  it('without the message, it sometimes decides again on unknown: a new step', async () => {
    const policy = new ScriptedPolicy(false, [unknown]);
    const { outcomes } = await agent(policy, 1, fast({ redecideOnUnknown: 1 })).run(charge());
    expect(policy.calls.map((c) => c.step)).toEqual(['charge-invoice', 'charge-invoice~1']);
    expect(outcomes[0]!.status).toBe('done');
  });

  it('ends unknown when a baseline harness refuses to retry and the model does not decide again', async () => {
    const policy = new ScriptedPolicy(false, [unknown]);
    const { outcomes } = await agent(policy, 1, fast({ redecideOnUnknown: 0 })).run(charge());
    expect(outcomes[0]).toMatchObject({ status: 'unknown', calls: 1 });
  });

  it('retries the same step after an ambiguous error and a new step after a refusal', async () => {
    const policy = new ScriptedPolicy(false, [{ kind: 'error', ambiguous: true, text: 'ECONNRESET' }, { kind: 'error', ambiguous: false, text: 'HTTP 400' }]);
    await agent(policy, 2, fast({ regenerate: 0 })).run(charge());
    expect(policy.calls.map((c) => c.step)).toEqual(['charge-invoice', 'charge-invoice', 'charge-invoice~1']);
  });

  it('param-drift: the first repair rewords a parameter, and after a conflict the harness resubmits what the step was decided with', async () => {
    const policy = new ScriptedPolicy(true, [unknown, { kind: 'conflict', text: 'declared with other arguments' }]);
    const intents = charge();
    const a = agent(policy, 5, fast());
    a.driftOnRepair('charge');
    await a.run(intents);
    const [first, repair, resubmit] = policy.calls;
    expect(intents[0]!.rephrasings).toContainEqual(repair!.args);
    expect(repair!.step).toBe(first!.step);
    expect(resubmit!.args).toEqual(first!.args);
  });

  it('holds a dependent intent back until the one it needs is done', async () => {
    const policy = new ScriptedPolicy(false, [{ kind: 'unknown', text: 'no answer; not retried' }]);
    const { outcomes } = await agent(policy, 1, fast({ redecideOnUnknown: 0 })).run(workload('charge-then-email')!.intents('t2'));
    expect(outcomes.map((o) => o.status)).toEqual(['unknown', 'blocked']);
    expect(policy.calls).toHaveLength(1);
  });

  it('a re-decided step is not a declared repeat: only the planned step of the repeat carries the declaration', async () => {
    const [, second] = workload('reminder-repeat')!.intents('t3');
    const policy = new ScriptedPolicy(true, [unknown]);
    await agent(policy, 1, fast({ redecideOnUnknown: 1, repairOnUnknown: 0 })).run([second!]);
    expect(policy.calls.map((c) => [c.step, c.repeat?.reason !== undefined])).toEqual([['remind-again', true], ['remind-again~1', false]]);
  });

  it('a retry of a declared repeat that surely did not happen is still the declared repeat', async () => {
    const [, second] = workload('reminder-repeat')!.intents('t5');
    const policy = new ScriptedPolicy(true, [{ kind: 'not_done', text: 'not_done: never sent: ECONNREFUSED' }]);
    await agent(policy, 1, fast()).run([second!]);
    expect(policy.calls.map((c) => [c.step, c.repeat?.reason !== undefined])).toEqual([['remind-again', true], ['remind-again~1', true]]);
  });

  it('"already done" for a held step is not the last word while the intent\'s own effect is open: the harness waits for that one', async () => {
    // The re-decided reminder is held against the FIRST reminder (same content, committed); the second one's own effect is still open.
    const heldDone: Observation = { kind: 'done', held: true, receipt: 'em_first', text: 'already done: email.send … happened in step remind (receipt em_first)' };
    const policy = new ScriptedPolicy(true, [unknown, heldDone], { kind: 'done', receipt: 'em_second', text: 'done' });
    const [, second] = workload('reminder-repeat')!.intents('t4');
    const { outcomes } = await agent(policy, 1, fast({ redecideOnUnknown: 1, repairOnUnknown: 0 })).run([second!]);
    expect(policy.settles).toBe(1);
    expect(outcomes[0]).toMatchObject({ status: 'done', receipt: 'em_second' });
  });
});
