import type { SagaRun } from './saga-harness.js';
import type { SagaPlan } from './saga-plans.js';
import type { IntentOutcome, ScriptedAgent } from './scripted-agent.js';
import type { IntentSpec } from './workloads.js';

/**
 * A baseline's saga: the naive sequential script people write without an orchestrator. Each step is
 * one tool call through the baseline's policy (its keys, its retries, the same scripted model that
 * retries error texts and may reword); on a step that does not come back done it gives up and
 * compensates, last first, what it believes committed — its honest best effort, with no ledger.
 */
export class BaselineSagaScript {
  constructor(private readonly agent: ScriptedAgent, private readonly plan: SagaPlan, private readonly tag: string) {}

  async run(): Promise<SagaRun> {
    const receipts: Record<string, string> = {};
    const committed: string[] = [];
    const outcomes: IntentOutcome[] = [];
    let failedAt: string | undefined;
    for (const planned of this.plan.steps(this.tag)) {
      const args = this.plan.stepArgs(this.tag, planned.id, receipts);
      const intent: IntentSpec = { ...planned, args, rephrasings: [this.plan.rephraseStep(planned.id, args)] };
      const run = await this.agent.run([intent]);
      const outcome = run.outcomes[0]!;
      outcomes.push(outcome);
      if (outcome.status === 'done') {
        receipts[planned.id] = outcome.receipt ?? '';
        committed.push(planned.id);
        continue;
      }
      failedAt = planned.id;
      break;
    }
    if (failedAt !== undefined) {
      for (const step of [...committed].reverse()) {
        const compensation = this.plan.compensation(this.tag, step, receipts[step]!, receipts);
        if (!compensation) continue;
        const run = await this.agent.run([compensation]);
        outcomes.push(run.outcomes[0]!);
      }
    }
    // The agent's transcript and latencies accumulate across its runs.
    const { transcript, latenciesMs } = await this.agent.run([]);
    return {
      outcome: failedAt === undefined ? 'completed' : 'failed',
      status: failedAt === undefined ? 'completed' : `gave up at ${failedAt}; compensated ${committed.length} step(s) it believed committed`,
      outcomes,
      transcript,
      latenciesMs,
      unknownMs: outcomes.reduce((s, o) => s + o.unknownMs, 0),
      neverSent: [],
      undoWithHuman: [],
    };
  }
}
