import { sleep } from './bench-http.js';
import type { FaultAgent } from './faults.js';
import type { Send } from './policies/policy.js';
import { headers, type Route } from './policies/effectd.js';
import type { SagaPlan } from './saga-plans.js';
import type { FinalStatus, IntentOutcome, TranscriptEntry } from './scripted-agent.js';
import { CodedError } from '../../../src/shared/coded-error.js';

/** GET /v1/sagas/:workflowId, as effectd answers it (src/shell/saga-runner.ts). */
export interface SagaView {
  saga: string;
  workflowId: string;
  status: 'running' | 'paused' | 'compensating' | 'completed' | 'compensated' | 'compensation_failed';
  why?: string;
  steps: {
    name: string;
    tool: string;
    effectId: string;
    state: string;
    receipt?: string;
    /** `tries` > 1: the earlier tries were never sent (the provider refused the connection), so effectd sent it again. */
    compensation?: { name: string; tool: string; effectId: string; state: string; receipt?: string; tries?: number };
  }[];
}

/** How one saga ended, for scoring: the system's last word on every step and compensation. */
export interface SagaRun {
  /** completed; failed (the system says it undid what had committed); open (paused, running, or with a human). */
  outcome: 'completed' | 'failed' | 'open';
  /** effectd's saga status, or the baseline script's own account. */
  status: string;
  why?: string;
  /** Forward steps (intentId = step name), then compensations that ran (intentId = compensate:<step>). */
  outcomes: IntentOutcome[];
  transcript: TranscriptEntry[];
  latenciesMs: number[];
  unknownMs: number;
  /** Steps effectd proved were never sent (before-dispatch evidence). */
  neverSent: string[];
  /** effectd's reason for each step or compensation that did not commit (its ledger's evidence). */
  reasons?: Record<string, string>;
  /**
   * Provider records whose undo the system handed to a human (effectd: `compensation_failed`, a
   * compensation that failed for sure): left in place, but not silently.
   */
  undoWithHuman: string[];
}

const FINAL = new Set(['completed', 'compensated', 'compensation_failed']);
const WITH_A_HUMAN = new Set(['escalated', 'terminal_failure']);
const PROVEN_FAILURE = new Set(['failed_before_effect', 'terminal_failure']);
const POLL_MS = 100;

/** What starting the saga answered: its view, a refusal of other input (422), or no answer (lost, cancelled, moved). */
export type StartAnswer = { kind: 'view'; view: SagaView } | { kind: 'conflict'; text: string } | { kind: 'none'; why: string };

/** How a harness starts a saga and reads it: effectd's HTTP API, or a Kafka command plus HTTP reads. */
export interface SagaIngress {
  start(input: Record<string, unknown>, signal: AbortSignal): Promise<StartAnswer>;
  read(): Promise<SagaView | undefined>;
  /** Why effectd says an effect ended as it did (GET /v1/effects/:id), for the fault's evidence. */
  reason(effectId: string): Promise<string | undefined>;
  /** The workflow moved (HTTP rebalance): later calls go to the other instance. */
  moveTo?(route: Route): void;
}

/** effectd's HTTP API: POST /v1/sagas (idempotent on the workflowId; redelivered while effectd does not answer), GET /v1/sagas/:id. */
export class HttpSagaIngress implements SagaIngress {
  constructor(private route: Route, private readonly send: Send, private readonly saga: string, private readonly workflowId: string, private readonly deadline: number) {}

  moveTo(route: Route): void {
    this.route = route;
  }

  async start(input: Record<string, unknown>, signal: AbortSignal): Promise<StartAnswer> {
    const body = JSON.stringify({ saga: this.saga, workflowId: this.workflowId, input });
    for (let redelivery = 0; ; redelivery++) {
      const endpoint = this.route();
      const result = await this.send({ method: 'POST', url: `${endpoint.url}/v1/sagas`, headers: headers(endpoint, true), body, timeoutMs: 10_000, signal });
      if (result.kind === 'cancelled') return { kind: 'none', why: 'the call to effectd was cancelled before an answer came back' };
      if (result.kind === 'response' && result.status === 422) return { kind: 'conflict', text: JSON.stringify(result.body) };
      if (result.kind === 'response' && (result.status === 401 || result.status === 403)) throw new CodedError('invalid_config', `effectd refused the benchmark's agent credential: ${JSON.stringify(result.body)}`);
      if (result.kind === 'response' && result.status >= 200 && result.status < 300) return { kind: 'view', view: result.body as SagaView };
      if (result.kind === 'response' && result.status < 500) throw new CodedError('internal', `POST /v1/sagas answered HTTP ${result.status}: ${JSON.stringify(result.body)}`);
      // effectd never answered (killed, restarting): the harness redelivers the same start.
      const wait = Math.min(100 * 2 ** redelivery, 800);
      if (Date.now() + wait >= this.deadline || signal.aborted) return { kind: 'none', why: `effectd did not answer: ${result.kind === 'response' ? `HTTP ${result.status}` : result.error}` };
      await sleep(wait, signal);
    }
  }

  async read(): Promise<SagaView | undefined> {
    return readSaga(this.route(), this.send, this.workflowId);
  }

  async reason(effectId: string): Promise<string | undefined> {
    return effectReason(this.route(), this.send, effectId);
  }
}

export async function readSaga(endpoint: ReturnType<Route>, send: Send, workflowId: string): Promise<SagaView | undefined> {
  const result = await send({ method: 'GET', url: `${endpoint.url}/v1/sagas/${encodeURIComponent(workflowId)}`, headers: headers(endpoint, false), timeoutMs: 5_000 });
  return result.kind === 'response' && result.status === 200 ? (result.body as SagaView) : undefined;
}

/** effectd's reason for an effect's state, and its evidence (every attempt, check and outcome, in order). */
export async function effectReason(endpoint: ReturnType<Route>, send: Send, effectId: string): Promise<string | undefined> {
  const result = await send({ method: 'GET', url: `${endpoint.url}/v1/effects/${encodeURIComponent(effectId)}`, headers: headers(endpoint, false), timeoutMs: 5_000 });
  if (result.kind !== 'response' || result.status !== 200) return undefined;
  const body = result.body as { reason?: string; evidence?: { at: string; summary: string }[] };
  const evidence = (body.evidence ?? []).map((e) => `${e.at.slice(11, 23)} ${e.summary}`);
  return `${body.reason ?? ''}${evidence.length > 0 ? ` [evidence: ${evidence.join(' | ')}]` : ''}`;
}

/**
 * The effectd harness for a saga workload: one call starts the saga (effectd runs its steps, each
 * an effect with its own key), then it watches GET /v1/sagas/:id until the saga finishes — or
 * pauses on a step handed to a human, which counts as unresolved. param-drift: the model's repair
 * attempt restarts the saga with a rewritten input, which effectd refuses (other input, same workflow).
 */
export class EffectdSagaHarness implements FaultAgent {
  private readonly transcript: TranscriptEntry[] = [];
  private inFlight: AbortController | undefined;
  private drift = false;
  private readonly neverSentSteps = new Set<string>();
  private movedNow: (() => void) | undefined;

  constructor(
    private readonly ingress: SagaIngress,
    private readonly plan: SagaPlan,
    private readonly tag: string,
    private readonly deadline: number,
    private readonly startedAt: number,
  ) {}

  crash(): void {
    // In effectd cells the fault kills effectd, never the harness.
  }

  moveWorkflow(): void {
    this.note('move', 'the workflow moves to another instance; the harness reads the saga there');
    this.movedNow?.();
  }

  cancel(): boolean {
    if (!this.inFlight || this.inFlight.signal.aborted) return false;
    this.note('cancel', 'the caller gives up on the saga start in flight');
    this.inFlight.abort();
    return true;
  }

  driftOnRepair(): void {
    this.drift = true;
  }

  /** Whether effectd's ledger says this step was never sent (the connection was refused): before-dispatch evidence. */
  neverSent(intentId: string): boolean {
    return this.neverSentSteps.has(intentId);
  }

  async run(): Promise<SagaRun> {
    const latencies: number[] = [];
    let view: SagaView | undefined;
    let unknownSince: number | undefined;
    let unknownMs = 0;
    const observe = (next: SagaView | undefined) => {
      if (!next) return;
      view = next;
      const open = !FINAL.has(next.status);
      if (open) unknownSince ??= Date.now();
      else if (unknownSince !== undefined) {
        unknownMs += Date.now() - unknownSince;
        unknownSince = undefined;
      }
    };

    this.note('call', `start saga ${this.plan.saga}`);
    const started = performance.now();
    const answer = await this.call(this.plan.input(this.tag));
    latencies.push(performance.now() - started);
    this.note('observe', describe(answer));
    if (answer.kind === 'view') observe(answer.view);

    let drifted = false;
    while (Date.now() < this.deadline) {
      if (view && FINAL.has(view.status)) break;
      if (view && view.status === 'paused' && withAHuman(view)) {
        this.note('escalated', `paused: ${view.why ?? 'a step is with a human'}`);
        break;
      }
      if (this.drift && !drifted) {
        drifted = true;
        this.note('decide', 'repair attempt: the model starts the saga again with a rewritten input');
        const repair = await this.call(this.plan.rephrasedInput(this.tag));
        this.note('observe', describe(repair));
        if (repair.kind === 'view') observe(repair.view);
        continue;
      }
      await sleep(POLL_MS);
      observe(await this.ingress.read().catch(() => undefined));
    }
    if (unknownSince !== undefined) unknownMs += Date.now() - unknownSince;
    const reasons: Record<string, string> = {};
    for (const step of view?.steps ?? []) {
      if ((step.compensation?.tries ?? 0) > 1) this.neverSentSteps.add(`compensate:${step.name}`);
      for (const [name, effect] of [[step.name, step], [`compensate:${step.name}`, step.compensation]] as const) {
        if (!effect || effect.state === 'committed' || effect.state === 'not started') continue;
        const reason = await this.ingress.reason(effect.effectId).catch(() => undefined);
        if (reason) reasons[name] = `${effect.state}: ${reason}`;
        if (effect.state === 'failed_before_effect' && reason && /never sent/.test(reason)) this.neverSentSteps.add(name);
      }
    }
    this.note('final', view ? `${view.status}${view.why ? `: ${view.why}` : ''}` : 'no answer from effectd');
    const status = view?.status ?? 'no answer';
    return {
      outcome: view?.status === 'completed' ? 'completed' : view?.status === 'compensated' || view?.status === 'compensation_failed' ? 'failed' : 'open',
      status,
      ...(view?.why ? { why: view.why } : {}),
      undoWithHuman: view?.status === 'compensation_failed' ? view.steps.filter((s) => s.compensation && PROVEN_FAILURE.has(s.compensation.state) && s.receipt).map((s) => s.receipt!) : [],
      outcomes: view ? outcomesOf(view) : this.plan.steps(this.tag).map((s) => ({ intentId: s.id, status: 'unknown', steps: [], calls: 0, unknownMs: 0 })),
      transcript: this.transcript,
      latenciesMs: latencies,
      unknownMs,
      neverSent: [...this.neverSentSteps],
      reasons,
    };
  }

  /** One start (or repair) call; a move to another instance abandons the wait (the call goes on unobserved). */
  private async call(input: Record<string, unknown>): Promise<StartAnswer> {
    const controller = new AbortController();
    this.inFlight = controller;
    const moved = new Promise<StartAnswer>((resolve) => {
      this.movedNow = () => resolve({ kind: 'none', why: 'the workflow moved to another instance' });
    });
    try {
      return await Promise.race([this.ingress.start(input, controller.signal), moved]);
    } finally {
      this.inFlight = undefined;
      this.movedNow = undefined;
    }
  }

  private note(event: string, detail?: string): void {
    this.transcript.push({ t: Date.now() - this.startedAt, intent: 'saga', event, ...(detail ? { detail } : {}) });
  }
}

function withAHuman(view: SagaView): boolean {
  return view.steps.some((s) => WITH_A_HUMAN.has(s.state) || (s.compensation !== undefined && WITH_A_HUMAN.has(s.compensation.state)));
}

/** A step's state as the three-state answer (plus escalated), from effectd's saga view. */
function statusOf(state: string): FinalStatus {
  if (state === 'committed') return 'done';
  if (state === 'failed_before_effect' || state === 'not started') return 'not_done';
  if (WITH_A_HUMAN.has(state)) return 'escalated';
  return 'unknown';
}

function outcomesOf(view: SagaView): IntentOutcome[] {
  const out: IntentOutcome[] = view.steps.map((s) => ({ intentId: s.name, status: statusOf(s.state), state: s.state, ...(s.receipt ? { receipt: s.receipt } : {}), steps: [s.name], calls: 0, unknownMs: 0 }));
  for (const s of [...view.steps].reverse()) {
    const c = s.compensation;
    // compensation_failed: effectd hands the undo it could not do to a human.
    const status = view.status === 'compensation_failed' && c && PROVEN_FAILURE.has(c.state) ? 'escalated' : statusOf(c?.state ?? '');
    if (c && c.state !== 'not started') out.push({ intentId: `compensate:${s.name}`, status, state: c.state, ...(c.receipt ? { receipt: c.receipt } : {}), steps: [`compensate:${s.name}`], calls: 0, unknownMs: 0 });
  }
  return out;
}

function describe(answer: StartAnswer): string {
  switch (answer.kind) {
    case 'view':
      return `${answer.view.status}: ${answer.view.steps.map((s) => `${s.name} ${s.state}${s.compensation && s.compensation.state !== 'not started' ? ` (undo ${s.compensation.state})` : ''}`).join(', ')}`;
    case 'conflict':
      return `conflict (422): ${answer.text.slice(0, 160)}`;
    case 'none':
      return `no answer: ${answer.why}`;
  }
}
