import type { AgentOutcome } from '../core/agent-outcome.js';
import type { EffectState } from '../core/effect-state.js';
import type { DecisionRecorded, DuplicateHandled, EffectDeclared, EffectResolved } from '../core/events.js';
import type { WorkflowState } from '../core/fold.js';
import type { EffectAddress } from '../core/identity.js';
import type { Tool } from '../providers/tool-registry.js';
import type { EffectCommand } from '../core/effect-command.js';

/** Finds an effect of the same content in the tenant's other workflows (the content index's tenant window). */
export interface TenantContentIndex {
  find(tenant: string, contentKey: string, excludeEffectId: string, now: number): Promise<{ effect: EffectState; stream: string } | undefined>;
}

/** How the shell handled a command, for transports that map it to a status code. */
export type Disposition = 'dispatched' | 'replayed' | 'reconciled' | 'in-flight' | 'held-unknown' | 'held';

export interface ShellAnswer {
  outcome: AgentOutcome;
  disposition: Disposition;
}

/** An effect's declaration and tool: what claiming and dispatching it needs. */
export interface PreparedEffect {
  tool: Tool;
  effectId: string;
  stream: string;
  declaration: Omit<EffectDeclared, 'at'>;
}

/** A command checked against its tool: everything the shell needs, nothing persisted yet. */
export interface PreparedCommand extends PreparedEffect {
  command: EffectCommand;
  address: EffectAddress;
}

/** Who an effect is declared for and by: the tenant and actor come from authentication, never from the payload. */
export interface Actor {
  tenant: string;
  /** The authenticated credential's name (or effectd's own, for saga steps). */
  actor: string;
  /** A payload's "principal": kept as a labelled claim, never as the actor. */
  onBehalfOf?: string;
}

export interface DecisionInput {
  step: string;
  tool: string;
  args: Record<string, unknown>;
  decidedBy?: string;
}

export type Resolution = Pick<EffectResolved, 'resolvedBy' | 'outcome' | 'reason'> & { receipt?: string };

export type DuplicateHandling = Omit<DuplicateHandled, 'type' | 'v' | 'at' | 'effectId'>;

/**
 * The one narrow interface the application layer (src/gateway) uses: commands that write through
 * the shell's runner, and reads of the workflow state. Nothing above the shell reaches its parts.
 */
export interface ShellPort {
  /** Validates a raw command against the wire schema and the tool's contract, for an authenticated actor (throws `invalid_command` / `unknown_tool`, saying first what the workflow did on the target). */
  prepare(raw: unknown, as: Actor): Promise<PreparedCommand>;
  /**
   * Takes a submission as far as it goes now; after a lost reply the answer waits up to
   * `budgetMs` for reconciliation to settle it (inline settle); the outcome's `waitedMs` says how long it waited.
   */
  submit(effect: PreparedCommand, budgetMs: number): Promise<ShellAnswer>;
  /** prepare + submit with no wait: a saga step or an operator's undo. */
  execute(raw: unknown, as: Actor): Promise<ShellAnswer>;
  /** Journals the model's decision for a step (a step is decided once). */
  decide(tenant: string, workflowId: string, input: DecisionInput, recordedBy: string): Promise<{ decision: DecisionRecorded; replayed: boolean }>;
  /** An operator settles an escalated, terminal or unknown effect with what they found. */
  resolve(effect: EffectState, resolution: Resolution): Promise<EffectState>;
  /** An operator lets a held effect go: released and claimed in one append, then dispatched. */
  release(effect: EffectState, releasedBy: string, reason: string): Promise<ShellAnswer>;
  /** The one who declared an effect (or an operator) withdraws it before anything was sent: not done, never sent; refused once claimed. */
  withdraw(effect: EffectState, withdrawnBy: string, reason: string): Promise<EffectState>;
  /** Records how an operator dealt with one extra object of a detected duplicate. */
  handleDuplicate(effect: EffectState, handling: DuplicateHandling): Promise<EffectState>;
  /** A workflow's state now (the fold of its stream). */
  read(stream: string): Promise<WorkflowState>;
  tool(name: string): Tool | undefined;
  tools(): readonly Tool[];
  /** What the agent is told about an effect as recorded (`matched`: the effect a held one waits on). */
  answer(effect: EffectState, replayed: boolean, matched?: EffectState): AgentOutcome;
  /** effectd still has a step of its own to take for it (a lookup due): it is not a human's yet. */
  stillLooking(effect: EffectState, now: number): boolean;
  now(): number;
}
