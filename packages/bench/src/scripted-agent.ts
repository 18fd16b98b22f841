import { sleep } from './bench-http.js';
import type { Observation, Policy, ToolCall } from './policies/policy.js';
import { nextSpelling } from './respelling.js';
import type { Rng } from './rng.js';
import type { IntentSpec } from './workloads.js';

/** How the scripted model behaves; every choice is drawn from the cell's seeded Rng. */
export interface AgentProfile {
  /** On a retry after an error, the model regenerates its arguments with this probability. */
  regenerate: number;
  /** On `unknown`, the model resubmits the same step (a repair attempt, maybe reworded)… */
  repairOnUnknown: number;
  /** …at most this many times per intent before it waits. */
  maxRepairsOnUnknown: number;
  /** On `unknown`, the model decides again: a new step, i.e. a new effect. */
  redecideOnUnknown: number;
  /** Tool calls the model makes for one intent before it gives up. */
  maxDecisions: number;
  /** The model's thinking time between a result and its next call. */
  thinkMs: readonly [number, number];
  /** How long a crashed agent process takes to come back. */
  restartMs: number;
}

export const DEFAULT_PROFILE: AgentProfile = { regenerate: 0.35, repairOnUnknown: 0.5, maxRepairsOnUnknown: 2, redecideOnUnknown: 0.3, maxDecisions: 5, thinkMs: [100, 250], restartMs: 150 };

/**
 * Defaults per policy: an effectd harness enforces "do not start another" (the model is never
 * allowed to decide again on `unknown`); the baselines carry no such message.
 */
export function profileFor(obeysUnknown: boolean, redecide?: number): AgentProfile {
  return { ...DEFAULT_PROFILE, redecideOnUnknown: redecide ?? (obeysUnknown ? 0 : DEFAULT_PROFILE.redecideOnUnknown) };
}

/**
 * The `effectd+redecide` column's model: on every `unknown` it decides again — a new step, a new
 * effect, never a resubmission of the same step — and under param-drift that new step rewords a
 * parameter. Only effectd's content index stands between it and a duplicate.
 */
export const REDECIDING_PROFILE: AgentProfile = { ...DEFAULT_PROFILE, redecideOnUnknown: 1, repairOnUnknown: 0 };

export type FinalStatus = 'done' | 'not_done' | 'unknown' | 'escalated' | 'blocked';

export interface IntentOutcome {
  intentId: string;
  status: FinalStatus;
  receipt?: string;
  /** effectd's state of the effect, when the last word came from effectd. */
  state?: string;
  /** effectd's effect the last word was about, when it is still open (for its evidence). */
  effectId?: string;
  /** Steps the intent went through (a new one each time the model decided again). */
  steps: string[];
  calls: number;
  unknownMs: number;
  /** What the intent's first answer was (an `unknown` here is a turn in which the model may decide badly). */
  firstAnswer?: Observation['kind'];
}

export interface TranscriptEntry {
  /** ms since the cell started */
  t: number;
  intent: string;
  event: string;
  detail?: string;
}

export interface AgentHooks {
  beforeCall?(intent: IntentSpec, callNumber: number): void | Promise<void>;
  afterCall?(intent: IntentSpec, callNumber: number, observation: Observation): void | Promise<void>;
}

export interface AgentRun {
  outcomes: IntentOutcome[];
  transcript: TranscriptEntry[];
  /** Duration of each agent-visible tool call. */
  latenciesMs: number[];
}

class Interrupted extends Error {
  constructor(readonly how: 'crash' | 'move') {
    super(how);
  }
}

interface Journal {
  step: string;
  /** The arguments the step was first decided with: the harness resubmits these after a conflict. */
  decided: Record<string, unknown>;
  args: Record<string, unknown>;
  steps: string[];
  calls: number;
  nextStepNumber: number;
  driftPending: boolean;
  repairsOnUnknown: number;
  /**
   * Whether the current step carries the intent's repeat declaration. The planned step does; a
   * step that replaces one proven not to have happened does too (the repeat is still owed); a
   * step decided again while an earlier one may have happened does not.
   */
  declaresRepeat: boolean;
  /** While the model respells an argument refused by the tool (issue 32): the field, and every spelling it wrote. */
  respell?: { field: string; tried: string[] };
}

const WITH_A_HUMAN = new Set(['escalated', 'terminal_failure']);

/**
 * A deterministic stand-in for a model and its harness (no LLM): it works through a workload's
 * intents in order and, as models do, retries on error texts (sometimes with regenerated or
 * reworded arguments), may repair or decide again on `unknown`, and records everything it saw.
 */
export class ScriptedAgent {
  private readonly transcript: TranscriptEntry[] = [];
  private readonly latencies: number[] = [];
  private readonly controllers = new Map<string, AbortController>();
  private readonly zombies = new Set<Promise<unknown>>();
  private readonly parkedSignals = new Map<string, () => void>();
  private interruptNow: ((how: 'crash' | 'move') => void) | undefined;
  private interruption: Promise<'crash' | 'move'>;
  private readonly callCounts = new Map<string, number>();
  private readonly driftIntents = new Set<string>();
  private readonly repeatIntents = new Set<string>();
  private readonly redeliveries = new Map<string, () => void>();
  /** Intents whose `redecideRespelled` decision was made (once per intent, across restarts). */
  private readonly redecided = new Set<string>();
  private crashes = 0;

  constructor(
    private readonly policy: Policy,
    private readonly rng: Rng,
    private readonly profile: AgentProfile,
    private readonly workflowId: string,
    private readonly deadline: number,
    private readonly startedAt: number,
    private readonly hooks: AgentHooks = {},
  ) {
    this.interruption = this.freshInterruption();
  }

  /** param-drift: the model's first repair attempt for this intent changes or rewords a parameter. */
  driftOnRepair(intentId: string): void {
    this.driftIntents.add(intentId);
  }

  /** retention-shorter-than-declared: on this intent's first `unknown`, a model that repairs at all repeats the same step. */
  repeatOnUnknown(intentId: string): void {
    this.repeatIntents.add(intentId);
  }

  /**
   * duplicate-delivery: the intent's first call is delivered twice. Once it has answered (the model
   * reads that answer), the very same call (step, arguments) is delivered again, as a queue
   * redelivers a message whose handling it never saw acknowledged; its answer goes nowhere.
   */
  redeliver(intentId: string, delivered: () => void): void {
    this.redeliveries.set(intentId, delivered);
  }

  /** The agent's process dies: calls in flight are cut; it comes back and resumes from its checkpoint. */
  crash(): void {
    this.note('*', 'crash', 'the agent process is killed; it restarts from its last checkpoint');
    this.crashes += 1;
    this.interruptNow?.('crash');
    for (const controller of this.controllers.values()) controller.abort();
  }

  /** The workflow moves to another worker; the old worker's call in flight goes on unobserved. */
  moveWorkflow(): void {
    this.note('*', 'move', 'the workflow moves to another worker');
    this.interruptNow?.('move');
  }

  /** The user gives up on the tool call in flight for `intentId`. True when there was one to cancel. */
  cancel(intentId: string): boolean {
    const controller = this.controllers.get(intentId);
    if (!controller || controller.signal.aborted) return false;
    this.note(intentId, 'cancel', 'the caller gives up on the call in flight');
    controller.abort();
    return true;
  }

  async run(intents: IntentSpec[]): Promise<AgentRun> {
    const outcomes = new Map<string, Promise<IntentOutcome>>();
    for (const intent of intents) {
      const blockers = await Promise.all((intent.dependsOn ?? []).map((id) => outcomes.get(id)!));
      if (blockers.some((b) => b.status !== 'done')) {
        this.note(intent.id, 'blocked', `waits for ${intent.dependsOn!.join(', ')}, which ${blockers.map((b) => b.status).join('/')}`);
        outcomes.set(intent.id, Promise.resolve({ intentId: intent.id, status: 'blocked', steps: [], calls: 0, unknownMs: 0 }));
        continue;
      }
      const parked = new Promise<void>((resolve) => this.parkedSignals.set(intent.id, resolve));
      const outcome = this.runWithRestarts(intent);
      outcomes.set(intent.id, outcome);
      // An intent waiting on an unknown effect does not hold up the next independent one.
      await Promise.race([outcome, parked]);
    }
    const results = await Promise.all(intents.map((i) => outcomes.get(i.id)!));
    while (this.zombies.size > 0) await Promise.allSettled([...this.zombies]);
    return { outcomes: results, transcript: this.transcript, latenciesMs: this.latencies };
  }

  private freshInterruption(): Promise<'crash' | 'move'> {
    return new Promise((resolve) => {
      this.interruptNow = (how) => {
        resolve(how);
        this.interruption = this.freshInterruption();
      };
    });
  }

  private freshJournal(intent: IntentSpec): Journal {
    return { step: intent.step, decided: intent.args, args: intent.args, steps: [intent.step], calls: 0, nextStepNumber: 1, driftPending: this.driftIntents.has(intent.id), repairsOnUnknown: 0, declaresRepeat: true };
  }

  private async runWithRestarts(intent: IntentSpec): Promise<IntentOutcome> {
    let journal = this.freshJournal(intent);
    for (let restart = 0; ; restart++) {
      try {
        return await this.runIntent(intent, journal);
      } catch (error) {
        if (!(error instanceof Interrupted) || restart >= 3) throw error;
        if (!this.policy.durableJournal) {
          // Nothing durable said the step was tried: the restarted worker runs it again from scratch.
          const drift = journal.driftPending;
          journal = { ...this.freshJournal(intent), driftPending: drift, calls: journal.calls };
        }
        this.note(intent.id, 'resume', `${error.how === 'crash' ? 'restarted' : 'picked up by another worker'}; resumes at step ${journal.step}`);
        // Its checkpoint was taken before the call: the model is asked again (issue 32).
        if (this.owesRedecision(intent)) this.redecideRespelled(intent, journal, 'resumed from a checkpoint taken before the call');
        if (error.how === 'crash') await sleep(this.profile.restartMs);
      }
    }
  }

  private async runIntent(intent: IntentSpec, journal: Journal): Promise<IntentOutcome> {
    let unknownMs = 0;
    let unknownSince: number | undefined;
    let firstAnswer: Observation['kind'] | undefined;
    const track = (observation: Observation) => {
      firstAnswer ??= observation.kind;
      if (observation.kind === 'unknown') unknownSince ??= Date.now();
      else if (unknownSince !== undefined) {
        unknownMs += Date.now() - unknownSince;
        unknownSince = undefined;
      }
    };
    const finish = (observation: Observation | undefined): IntentOutcome => {
      if (unknownSince !== undefined) unknownMs += Date.now() - unknownSince;
      return { intentId: intent.id, ...finalOf(observation), steps: journal.steps, calls: journal.calls, unknownMs, ...(firstAnswer ? { firstAnswer } : {}) };
    };
    let last: Observation | undefined;
    /** The intent's latest open effect, which an obedient harness waits for even when the model gives up. */
    let open: Extract<Observation, { kind: 'unknown' }> | undefined;
    /** The intent's own effect that is open (not a step held against another): only its outcome is this intent's. */
    let ownOpen: Extract<Observation, { kind: 'unknown' }> | undefined;
    const settle = async (observation: Extract<Observation, { kind: 'unknown' }>): Promise<Observation> => {
      this.note(intent.id, 'wait', 'unknown: the harness waits for effectd to settle it');
      this.parkedSignals.get(intent.id)?.();
      const settled = await this.policy.settle!(observation, this.callFor(intent, journal, new AbortController().signal), this.deadline);
      track(settled);
      this.note(intent.id, 'settled', brief(settled));
      return settled;
    };
    /**
     * "already done" for a held step names the step it matched, which may be another intent's (a
     * declared repeat and its original share their content): while this intent's own effect is
     * open, its outcome is the one that counts.
     */
    const ownWord = async (observation: Observation): Promise<Observation> => {
      if (observation.kind !== 'done' || !observation.held || !ownOpen || !this.policy.settle) return observation;
      this.note(intent.id, 'wait', "already done by a step of the same content: the harness still waits for this intent's own effect");
      return settle(ownOpen);
    };
    // Waiting is not deciding: an effect effectd proves absent after a wait earns the model one more try.
    let budget = this.profile.maxDecisions;
    while (journal.calls < budget && Date.now() < this.deadline) {
      let observation = await this.toolCall(intent, journal);
      track(observation);
      if (observation.kind === 'unknown' && observation.effectId) {
        open = observation;
        if (observation.state !== 'held') ownOpen = observation;
      }
      // Respelling ends once a spelling is accepted (an answer about an effect); an unanswered call may still be refused.
      if (observation.kind !== 'error' && !(observation.kind === 'unknown' && !observation.effectId)) journal.respell = undefined;
      if (this.owesRedecision(intent)) {
        // The answer never reached the model's checkpoint: asked again, it decides the intent again (issue 32).
        last = observation;
        this.redecideRespelled(intent, journal, `its checkpoint predates the answer (${observation.kind})`);
        await this.think();
        continue;
      }
      observation = await ownWord(observation);
      last = observation;
      switch (observation.kind) {
        case 'done':
          return finish(observation);
        case 'conflict':
          this.note(intent.id, 'decide', 'the harness resubmits the step with the arguments it was decided with');
          journal.args = journal.decided;
          continue;
        case 'not_done':
          if (ownOpen) {
            open = undefined;
            ownOpen = undefined;
            budget = Math.max(budget, journal.calls + 1);
          }
          this.newStep(intent, journal, 'not done: try again as a new step', true);
          await this.think();
          continue;
        case 'error': {
          const spelling = !observation.ambiguous && journal.respell ? nextSpelling(observation.text, journal.respell.tried) : undefined;
          if (spelling !== undefined) {
            // A refused call did nothing: the model's next try does not count against its decisions (the spellings run out).
            budget = Math.max(budget, journal.calls + 1);
            this.respell(intent, journal, spelling);
            await this.think();
            continue;
          }
          if (observation.ambiguous) this.repair(intent, journal, 'retry after an error text');
          else this.newStep(intent, journal, 'refused: fix and try again as a new call', true);
          await this.think();
          continue;
        }
        case 'unknown': {
          const canDecide = journal.calls < budget;
          if (this.policy.obeysUnknown) {
            const mayRepair = journal.repairsOnUnknown < this.profile.maxRepairsOnUnknown;
            // A model that never repairs (repairOnUnknown 0) rewords in its re-decision instead.
            const driftRepair = journal.driftPending && this.profile.repairOnUnknown > 0;
            const forcedRepeat = this.repeatIntents.has(intent.id) && this.profile.repairOnUnknown > 0;
            if (canDecide && mayRepair && (driftRepair || forcedRepeat || this.rng.chance(this.profile.repairOnUnknown))) {
              this.repeatIntents.delete(intent.id);
              journal.repairsOnUnknown += 1;
              this.repair(intent, journal, 'unknown: the model repeats the same step');
              await this.think();
              continue;
            }
            if (canDecide && this.rng.chance(this.profile.redecideOnUnknown)) {
              this.newStep(intent, journal, 'unknown: the model decides again (a new effect)', false);
              await this.think();
              continue;
            }
            const settled = await ownWord(await settle(observation));
            last = settled;
            if (settled.kind === 'not_done') {
              open = undefined;
              ownOpen = undefined;
              budget = Math.max(budget, journal.calls + 1);
              this.newStep(intent, journal, 'effectd proved it did not happen: try again as a new step', true);
              continue;
            }
            // Waiting ended in a refusal of the respelled amount (a resubmission answered at last): the model reads it as any refusal.
            const spelling = settled.kind === 'error' && !settled.ambiguous && journal.respell ? nextSpelling(settled.text, journal.respell.tried) : undefined;
            if (spelling !== undefined) {
              budget = Math.max(budget, journal.calls + 1);
              this.respell(intent, journal, spelling);
              await this.think();
              continue;
            }
            return finish(settled);
          }
          if (canDecide && this.rng.chance(this.profile.redecideOnUnknown)) {
            this.newStep(intent, journal, 'no answer: the model decides to do it again', false);
            await this.think();
            continue;
          }
          return finish(observation);
        }
      }
    }
    if (this.policy.obeysUnknown && (ownOpen ?? open) && last?.kind !== 'done' && last?.kind !== 'not_done') return finish(await ownWord(await settle((ownOpen ?? open)!)));
    return finish(last);
  }

  private async toolCall(intent: IntentSpec, journal: Journal): Promise<Observation> {
    const callNumber = (this.callCounts.get(intent.id) ?? 0) + 1;
    this.callCounts.set(intent.id, callNumber);
    await this.hooks.beforeCall?.(intent, callNumber);
    const controller = new AbortController();
    this.controllers.set(intent.id, controller);
    journal.calls += 1;
    this.note(intent.id, 'call', `#${callNumber} step ${journal.step}${describeArgs(intent.args, journal.args)}`);
    const started = performance.now();
    const crashesBefore = this.crashes;
    const pending = this.policy.call(this.callFor(intent, journal, controller.signal));
    const interrupted = this.interruption.then((how) => ({ interrupted: how }) as const);
    const raced = await Promise.race([pending.then((observation) => ({ observation }) as const), interrupted]);
    this.controllers.delete(intent.id);
    // A crash cuts the call (whichever settled first); a move leaves it running for a worker that no longer listens.
    const crashed = this.crashes !== crashesBefore;
    if (crashed || 'interrupted' in raced) {
      this.zombies.add(pending);
      void pending.finally(() => this.zombies.delete(pending));
      throw new Interrupted(crashed ? 'crash' : 'move');
    }
    this.latencies.push(performance.now() - started);
    const { observation } = raced;
    this.note(intent.id, 'observe', brief(observation));
    const redelivered = this.redeliveries.get(intent.id);
    if (redelivered) {
      this.redeliveries.delete(intent.id);
      this.note(intent.id, 'redelivered', `the same call (step ${journal.step}) is delivered again`);
      const again = await this.policy.call(this.callFor(intent, journal, new AbortController().signal));
      redelivered();
      this.note(intent.id, 'redelivery answered', `${brief(again)} (the model never reads it)`);
    }
    await this.hooks.afterCall?.(intent, callNumber, observation);
    return observation;
  }

  private callFor(intent: IntentSpec, journal: Journal, signal: AbortSignal): ToolCall {
    // The plan declares the repeat on its step; a step the model decided again is not a declared repeat.
    const repeat = journal.declaresRepeat ? intent.repeat : undefined;
    return { intent, workflowId: this.workflowId, step: journal.step, args: journal.args, ...(repeat ? { repeat } : {}), signal };
  }

  /** The same step again, maybe with regenerated or (param-drift) reworded arguments. */
  private repair(intent: IntentSpec, journal: Journal, why: string): void {
    if (journal.driftPending && intent.rephrasings.length > 0) {
      journal.driftPending = false;
      journal.args = this.rng.pick(intent.rephrasings);
      this.note(intent.id, 'decide', `${why}, rewording a parameter${describeArgs(intent.args, journal.args)}`);
      return;
    }
    journal.args = this.regenerated(intent, journal.args);
    this.note(intent.id, 'decide', why);
  }

  /** A new step: a new effect for effectd, a fresh key for a native-key harness. */
  private newStep(intent: IntentSpec, journal: Journal, why: string, replacesFailed: boolean): void {
    journal.step = `${intent.step}~${journal.nextStepNumber++}`;
    // A re-decision while an earlier step may have happened is not a declared repeat; a retry of one that surely did not is.
    journal.declaresRepeat = replacesFailed;
    journal.steps.push(journal.step);
    if (journal.driftPending && intent.rephrasings.length > 0 && this.profile.repairOnUnknown === 0) {
      // param-drift, for a model that decides again instead of repairing: the new step rewords a parameter.
      journal.driftPending = false;
      journal.args = this.rng.pick(intent.rephrasings);
      why = `${why}, rewording a parameter${describeArgs(intent.args, journal.args)}`;
    } else {
      journal.args = this.regenerated(intent, journal.args);
    }
    journal.decided = journal.args;
    this.note(intent.id, 'decide', `${why} (step ${journal.step})`);
  }

  private owesRedecision(intent: IntentSpec): boolean {
    return intent.redecideRespelled !== undefined && !this.redecided.has(intent.id);
  }

  /**
   * Issue 32: the model decides the intent again — a new step (a new message in its thread), not a
   * declared repeat — and writes the amount another way ("4900", meaning minor units).
   */
  private redecideRespelled(intent: IntentSpec, journal: Journal, why: string): void {
    const { field, spelling } = intent.redecideRespelled!;
    this.redecided.add(intent.id);
    journal.step = `${intent.step}~${journal.nextStepNumber++}`;
    journal.declaresRepeat = false;
    journal.steps.push(journal.step);
    let base = intent.args;
    let reworded = '';
    if (journal.driftPending && intent.rephrasings.length > 0 && this.profile.repairOnUnknown === 0) {
      // param-drift, for a model that decides again instead of repairing (as newStep): the new step rewords a parameter too.
      journal.driftPending = false;
      base = this.rng.pick(intent.rephrasings);
      reworded = `, rewording a parameter${describeArgs(intent.args, base)}`;
    }
    journal.args = { ...base, [field]: spelling };
    journal.decided = journal.args;
    journal.respell = { field, tried: [spelling] };
    this.note(intent.id, 'decide', `${why}: the model decides again (a new effect, step ${journal.step}), writing ${field}=${JSON.stringify(spelling)}${reworded}`);
  }

  /** Refused, the model writes what the refusal states first (respelling.ts), as a new call. */
  private respell(intent: IntentSpec, journal: Journal, spelling: string): void {
    const respell = journal.respell!;
    respell.tried.push(spelling);
    journal.step = `${intent.step}~${journal.nextStepNumber++}`;
    journal.steps.push(journal.step);
    journal.args = { ...journal.args, [respell.field]: spelling };
    journal.decided = journal.args;
    this.note(intent.id, 'decide', `refused: the model writes what the refusal states first, ${respell.field}=${JSON.stringify(spelling)} (step ${journal.step})`);
  }

  private regenerated(intent: IntentSpec, current: Record<string, unknown>): Record<string, unknown> {
    if (!this.rng.chance(this.profile.regenerate)) return current;
    const choices = [...intent.equivalents, ...intent.rephrasings];
    return choices.length === 0 ? current : this.rng.pick(choices);
  }

  private think(): Promise<void> {
    const [min, max] = this.profile.thinkMs;
    return sleep(this.rng.int(min, max));
  }

  private note(intent: string, event: string, detail?: string): void {
    this.transcript.push({ t: Date.now() - this.startedAt, intent, event, ...(detail ? { detail } : {}) });
  }
}

function finalOf(observation: Observation | undefined): { status: Exclude<IntentOutcome['status'], 'blocked'>; receipt?: string; state?: string; effectId?: string } {
  switch (observation?.kind) {
    case 'done':
      return { status: 'done', ...(observation.receipt ? { receipt: observation.receipt } : {}) };
    case 'not_done':
      return { status: 'not_done' };
    case 'unknown':
      return { status: observation.state !== undefined && WITH_A_HUMAN.has(observation.state) ? 'escalated' : 'unknown', ...(observation.state ? { state: observation.state } : {}), ...(observation.effectId ? { effectId: observation.effectId } : {}) };
    case 'error':
      return { status: observation.ambiguous ? 'unknown' : 'not_done' };
    case 'conflict':
    case undefined:
      return { status: 'unknown' };
  }
}

function brief(observation: Observation): string {
  const text = observation.text.length > 140 ? `${observation.text.slice(0, 140)}…` : observation.text;
  return `${observation.kind}${observation.kind === 'error' ? (observation.ambiguous ? ' (ambiguous)' : ' (definite)') : ''}: ${text}`;
}

/** The arguments as far as they differ from the intent's own. */
function describeArgs(original: Record<string, unknown>, args: Record<string, unknown>): string {
  if (args === original) return '';
  const changed = Object.keys({ ...original, ...args }).filter((k) => JSON.stringify(original[k]) !== JSON.stringify(args[k]));
  return changed.length === 0 ? '' : ` with ${changed.map((k) => `${k}=${JSON.stringify(args[k])}`).join(', ')}`;
}
