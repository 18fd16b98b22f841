import type { AgentOutcome } from '../core/agent-outcome.js';
import type { ListCursors } from './views/list-cursors.js';
import type { AnswerBudgetSettings } from '../core/answer-budget.js';
import type { Ledger } from '../ledger/ledger.port.js';
import type { ShellPort } from '../shell/shell-port.js';
import type { SagaRegistry } from '../shell/saga-registry.js';
import type { SagaRunner, SagaView } from '../shell/saga-runner.js';
import { authenticate, type Authenticator, type Caller, type Ingress } from './caller.js';
import * as commands from './commands.js';
import type { CommandParts, SubmitOptions, Submitted } from './commands.js';
import type { EffectIndex, Reads } from './reads.js';
import { effectDetail, effectList } from './views/effects.js';
import { serviceMeta } from './views/lifecycle.js';
import { sagaCatalog } from './views/saga-catalog.js';
import { sagaAnswer, sagaList, sagaView } from './views/sagas.js';
import { toolCatalog } from './views/tool-catalog.js';
import { decisionList, stepHistory, workflowList, workflowTimeline } from './views/workflows.js';

export type { EffectIndex } from './reads.js';
export type { SubmitOptions, Submitted } from './commands.js';
export type { Caller, Ingress } from './caller.js';

/** What the composition root (src/runtime/effectd-runtime.ts) gives the gateway. */
export interface GatewayParts {
  shell: ShellPort;
  sagaRunner: Pick<SagaRunner, 'start' | 'view'>;
  sagas: SagaRegistry;
  credentials: Authenticator;
  ledger: Pick<Ledger, 'readStream'>;
  effects: EffectIndex;
  now: () => number;
  /** Answer budgets after a lost reply (inline settle), read by the composition root (EFFECTD_ANSWER_BUDGET_MS / _MAX_MS). */
  answerBudget: AnswerBudgetSettings;
  /** Seals and opens list cursors with the instance secret's key. */
  cursors: ListCursors;
}

/**
 * The application layer's one entry, for every front door (HTTP, Kafka, MCP, CLI): authentication
 * (./caller.ts), the commands that write (./commands.ts) and the views that read (./views/), over
 * the shell port. It takes an authenticated caller, never a tenant or an actor from the payload, and
 * answers in effectd's own terms (outcomes, views, coded errors); transports only map those to
 * their wire. Each method is one line: what a use case does is in its command or view.
 */
export class Gateway {
  private readonly reads: Reads;
  private readonly commandParts: CommandParts;

  constructor(private readonly parts: GatewayParts) {
    const { shell, effects, ledger, sagaRunner, sagas, now, cursors } = parts;
    this.reads = { shell, effects, ledger, sagaRunner, sagas, now, cursors };
    this.commandParts = { shell, sagaRunner, sagas, answerBudget: parts.answerBudget, reads: this.reads };
  }

  // ------------------------------------------------------------ authentication

  /** The caller behind a credential, or `unauthorized`. */
  authenticate(token: string | undefined, ingress: Ingress): Caller {
    return authenticate(this.parts.credentials, token, ingress);
  }

  // ------------------------------------------------------------ commands (write)

  /** An effect command; `tool: "saga:<name>"` starts that saga instead (args = its input). One `effectd.command` span. */
  submit(caller: Caller, raw: unknown, options: SubmitOptions = {}): Promise<Submitted> {
    return commands.submit(this.commandParts, caller, raw, options);
  }

  /** A saga start (`POST /v1/sagas`): one `effectd.command` span, its steps' spans under it. */
  startSaga(caller: Caller, body: unknown): Promise<SagaView> {
    return commands.startSaga(this.commandParts, caller, body);
  }

  /** Journals the model's decision for a step before acting; `replayed` when the step was decided already. */
  decide(caller: Caller, workflowId: string, body: unknown, tenantQuery?: unknown) {
    return commands.decide(this.commandParts, caller, workflowId, body, tenantQuery);
  }

  /** An operator settles an escalated, terminal or unknown effect with what they found at the provider. */
  resolve(caller: Caller, effectId: string, body: unknown) {
    return commands.resolve(this.commandParts, caller, effectId, body);
  }

  /** An operator lets a held effect go (the repeat the agent should have declared): it is dispatched now. */
  release(caller: Caller, effectId: string, body: unknown): Promise<AgentOutcome> {
    return commands.release(this.commandParts, caller, effectId, body);
  }

  /** The credential that declared an effect (or an operator) withdraws it before anything was sent: not done, never sent (MCP tasks/cancel). */
  withdraw(caller: Caller, effectId: string, reason: string): Promise<AgentOutcome> {
    return commands.withdraw(this.commandParts, caller, effectId, reason);
  }

  /** An operator deals with one extra object of a detected duplicate (`compensate` runs the tool's undo, `keep` leaves it). */
  handleDuplicate(caller: Caller, effectId: string, receipt: string, body: unknown) {
    return commands.handleDuplicate(this.commandParts, caller, effectId, receipt, body);
  }

  // ------------------------------------------------------------ views (read)

  /** One effect, its state, outcome and every event about it (the evidence). */
  effect(caller: Caller, effectId: string) {
    return effectDetail(this.reads, caller, effectId);
  }

  /** Effects by state, newest first, a page at a time (`cursor`). */
  effects(caller: Caller, query: unknown) {
    return effectList(this.reads, caller, query);
  }

  /** Recent workflows the caller may see, most recently active first. */
  workflows(caller: Caller, query: unknown) {
    return workflowList(this.reads, caller, query);
  }

  /** The workflow's timeline: every intent, attempt, check and outcome in order, and each effect's state. */
  workflow(caller: Caller, workflowId: string, tenantQuery?: string) {
    return workflowTimeline(this.reads, caller, workflowId, tenantQuery);
  }

  decisions(caller: Caller, workflowId: string, tenant?: string) {
    return decisionList(this.reads, caller, workflowId, tenant);
  }

  /** What the model is told about earlier steps, built from the ledger. */
  history(caller: Caller, workflowId: string, tenant?: string) {
    return stepHistory(this.reads, caller, workflowId, tenant);
  }

  saga(caller: Caller, workflowId: string, tenant?: string): Promise<SagaView> {
    return sagaView(this.reads, caller, workflowId, tenant);
  }

  /** A saga as its start's three-state answer, with when it started and last moved (an MCP task). */
  sagaAnswer(caller: Caller, workflowId: string, tenant?: string) {
    return sagaAnswer(this.reads, caller, workflowId, tenant);
  }

  /** `GET /v1/sagas`: the sagas this effectd runs, and those set aside. */
  sagaDefinitions() {
    return sagaList(this.parts.sagas);
  }

  /** `GET /v1/sagas/definitions`: every saga with its steps, compensations and input schema. */
  sagaCatalog() {
    return sagaCatalog(this.parts.sagas);
  }

  /** `GET /v1/tools`: every configured tool, its contract and the JSON Schema of its arguments (no provider secrets). */
  toolCatalog() {
    return toolCatalog(this.parts.shell.tools());
  }

  /** `GET /v1/meta`: the effect lifecycle table, for clients that ask which states mean what. */
  meta() {
    return serviceMeta();
  }
}
