import type { AgentOutcome } from '../core/agent-outcome.js';
import { resolveAnswerBudget, type AnswerBudgetSettings } from '../core/answer-budget.js';
import { unhandledDuplicates } from '../core/effect-state.js';
import { asEffectdError, EffectdError, failureText, invalidCommand } from '../core/errors.js';
import type { EffectAddress } from '../core/identity.js';
import { fillJson } from '../providers/templates.js';
import { saysNothingRecorded } from '../shell/recorded-failure.js';
import type { Disposition, ShellPort } from '../shell/shell-port.js';
import { sagaNameOf, sagaOutcome } from '../shell/saga-outcome.js';
import type { SagaRegistry } from '../shell/saga-registry.js';
import type { SagaRunner, SagaView } from '../shell/saga-runner.js';
import { ATTR, commandAttributes, commandSpanKind, inSpan, sagaCommandAttributes, SPAN, withCommandTrace } from '../tracing/index.js';
import { tenantOf, type Caller } from './caller.js';
import { decisionInput, duplicateHandlingInput, releaseInput, resolutionInput, sagaInputField, sagaStartInput, workflowIdField, workflowIdOf } from './inputs.js';
import { visibleEffect, type Reads } from './reads.js';
import { detailOf } from './views/effects.js';
import { decisionView } from './views/workflows.js';

/**
 * The commands: every use case that writes, through the shell port (and the saga runner for a
 * saga's start). A command answers with its outcome, or with the view its answer needs, built by
 * a view function (src/gateway/views/): it formats nothing itself.
 */

/** What the commands are given by the gateway: the shell port, the saga runner's start, and the reads. */
export interface CommandParts {
  shell: ShellPort;
  sagaRunner: Pick<SagaRunner, 'start'>;
  sagas: SagaRegistry;
  /** How long an answer may wait after a lost reply (inline settle), from the composition root. */
  answerBudget: AnswerBudgetSettings;
  /** Where a command finds the effect it acts on, and what its answer is read back through. */
  reads: Reads;
}

export interface SubmitOptions {
  /** How long the caller will wait for a lost reply to be settled, in ms (HTTP `Prefer: wait`, Kafka `waitMs`, MCP `_meta`); the tool's default when absent. */
  waitMs?: number;
}

/** What a submission came to: the three-state outcome, how the shell got there, and where the effect sits. */
export interface Submitted {
  outcome: AgentOutcome;
  disposition: Disposition | 'saga';
  address: EffectAddress;
  /** The caller's wait was applied, as this budget in ms (capped at EFFECTD_ANSWER_BUDGET_MAX_MS). */
  waitApplied?: number;
}

/** An effect command; `tool: "saga:<name>"` starts that saga instead (args = its input). One `effectd.command` span. */
export function submit(parts: CommandParts, caller: Caller, raw: unknown, options: SubmitOptions = {}): Promise<Submitted> {
  // A child of the caller's span: from the transport (header, _meta), else the command's own `trace` field.
  return withCommandTrace(raw, () => inSpan(SPAN.command, commandSpanKind(caller.ingress), async (span) => {
    span?.setAttribute(ATTR.ingress, caller.ingress);
    const submitted = await submitCommand(parts, caller, raw, options);
    span?.setAttributes(commandAttributes(submitted));
    return submitted;
  }));
}

async function submitCommand(parts: CommandParts, caller: Caller, raw: unknown, options: SubmitOptions): Promise<Submitted> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new EffectdError('invalid_command', 'the command must be a JSON object (an effect command: workflowId, step, tool, args)');
  const command = raw as Record<string, unknown>;
  const tenant = tenantOf(caller, command.tenant);
  const onBehalfOf = typeof command.principal === 'string' ? command.principal : undefined;
  const sagaName = typeof command.tool === 'string' ? sagaNameOf(command.tool) : undefined;
  if (sagaName !== undefined) return submitSaga(parts, caller, tenant, sagaName, command);
  const prepared = await parts.shell.prepare(command, { tenant, actor: caller.name, ...(onBehalfOf !== undefined ? { onBehalfOf } : {}) });
  const budget = resolveAnswerBudget(prepared.tool.spec, parts.answerBudget, options.waitMs);
  const answer = await parts.shell.submit(prepared, budget.ms);
  // Object.assign, not a spread: a spread adding `address` costs microseconds on Node 20 (see settle in src/core/fold.ts).
  return Object.assign({}, answer, budget.requested ? { waitApplied: budget.ms } : {}, { address: prepared.address });
}

/** `tool: "saga:<name>"` on the effect-command wire: starts the saga, answered as one three-state outcome. */
async function submitSaga(parts: CommandParts, caller: Caller, tenant: string, name: string, command: Record<string, unknown>): Promise<Submitted> {
  const workflowId = workflowIdField.safeParse(command.workflowId);
  if (!workflowId.success) throw invalidCommand('the command is malformed', workflowId.error.issues, ['workflowId']);
  const input = sagaInputField.safeParse(command.args);
  if (!input.success) throw invalidCommand('the command is malformed', input.error.issues, ['args']);
  if (!parts.sagas.get(name)) {
    throw new EffectdError('unknown_tool', `unknown tool "saga:${name}": no saga "${name}" is registered; registered sagas: ${parts.sagas.names().join(', ') || 'none'}`, { tool: `saga:${name}` });
  }
  const view = await parts.sagaRunner.start(tenant, workflowId.data, name, command.args, caller.name).catch((error: unknown) => sagaFailure(parts, tenant, workflowId.data, name, error));
  return { outcome: sagaOutcome(view), disposition: 'saga', address: { tenant, workflowId: workflowId.data, step: 'saga', slot: '0' } };
}

/** A saga start (`POST /v1/sagas`): one `effectd.command` span, its steps' spans under it. */
export function startSaga(parts: CommandParts, caller: Caller, body: unknown): Promise<SagaView> {
  return inSpan(SPAN.command, commandSpanKind(caller.ingress), async (span) => {
    span?.setAttribute(ATTR.ingress, caller.ingress);
    const parsed = sagaStartInput.safeParse(body);
    if (!parsed.success) throw invalidCommand('invalid saga start', parsed.error.issues);
    const { saga, workflowId, input, tenant } = parsed.data;
    const as = tenantOf(caller, tenant);
    const view = await parts.sagaRunner.start(as, workflowId, saga, input, caller.name).catch((error: unknown) => sagaFailure(parts, as, workflowId, saga, error));
    span?.setAttributes(sagaCommandAttributes(view));
    return view;
  });
}

/** Journals the model's decision for a step before acting; `replayed` when the step was decided already. */
export async function decide(parts: CommandParts, caller: Caller, workflowId: string, body: unknown, tenantQuery?: unknown) {
  const parsed = decisionInput.safeParse(body);
  if (!parsed.success) throw invalidCommand('invalid decision', parsed.error.issues);
  const { tenant: bodyTenant, ...input } = parsed.data;
  // `?tenant=` (as the GETs of the same workflow take it) or the body's `tenant`: the same one when both are given.
  if (tenantQuery !== undefined && bodyTenant !== undefined && tenantQuery !== bodyTenant) {
    throw new EffectdError('invalid_command', `the query names tenant ${String(tenantQuery)} and the body tenant ${bodyTenant}: name one (or the same in both)`, { fields: [{ path: 'tenant', message: 'the query and the body name different tenants' }] });
  }
  const tenant = bodyTenant ?? tenantQuery;
  const id = workflowIdOf(workflowId);
  const result = await parts.shell.decide(tenantOf(caller, tenant), id, input, caller.name);
  return { replayed: result.replayed, decision: decisionView(result.decision) };
}

/** An operator settles an escalated, terminal or unknown effect with what they found at the provider. */
export async function resolve(parts: CommandParts, caller: Caller, effectId: string, body: unknown) {
  operatorOnly(caller, 'resolve an effect');
  const parsed = resolutionInput.safeParse(body);
  if (!parsed.success) throw invalidCommand('invalid resolution', parsed.error.issues);
  const effect = await visibleEffect(parts.reads, caller, effectId);
  const { outcome, receipt, reason } = parsed.data;
  const resolved = await parts.shell.resolve(effect, { resolvedBy: caller.name, outcome: outcome === 'committed' ? 'committed' : 'failed_before_effect', reason, ...(receipt ? { receipt } : {}) });
  return detailOf(parts.reads, resolved);
}

/** An operator lets a held effect go (the repeat the agent should have declared): it is dispatched now. */
export async function release(parts: CommandParts, caller: Caller, effectId: string, body: unknown): Promise<AgentOutcome> {
  operatorOnly(caller, 'release a held effect');
  const parsed = releaseInput.safeParse(body ?? {});
  if (!parsed.success) throw invalidCommand('invalid release', parsed.error.issues);
  const answer = await parts.shell.release(await visibleEffect(parts.reads, caller, effectId), caller.name, parsed.data.reason);
  return answer.outcome;
}

/**
 * Withdraws an effect before anything was sent for it (an MCP `tasks/cancel`): the credential that
 * declared it, or an operator. A saga's step is the saga's to run, never withdrawn from outside.
 * Refused (illegal_transition, with where it stands) once it was claimed: the world cannot be cancelled.
 */
export async function withdraw(parts: CommandParts, caller: Caller, effectId: string, reason: string): Promise<AgentOutcome> {
  const effect = await visibleEffect(parts.reads, caller, effectId);
  if (caller.role !== 'operator' && caller.name !== effect.declared.principal) {
    throw new EffectdError('forbidden', `${caller.name} did not declare effect ${effectId} (${effect.declared.principal} did); only it or an operator may withdraw it`, { effectId });
  }
  if (effect.declared.principal.startsWith('saga:')) {
    throw new EffectdError('illegal_transition', `effect ${effectId} is a step of ${effect.declared.principal}: the saga runs it, it is not withdrawn from outside`, { effectId });
  }
  const withdrawn = await parts.shell.withdraw(effect, caller.name, reason);
  return parts.shell.answer(withdrawn, true);
}

/**
 * An operator deals with one extra object of a detected duplicate: `compensate` runs the tool's
 * declared undo for that receipt as an effect of its own (keyed, reconciled), `keep` leaves it.
 */
export async function handleDuplicate(parts: CommandParts, caller: Caller, effectId: string, receipt: string, body: unknown) {
  operatorOnly(caller, 'handle a duplicate');
  const parsed = duplicateHandlingInput.safeParse(body);
  if (!parsed.success) throw invalidCommand('invalid duplicate handling', parsed.error.issues);
  const effect = await visibleEffect(parts.reads, caller, effectId);
  if (!unhandledDuplicates(effect).includes(receipt)) {
    throw new EffectdError('illegal_transition', `receipt ${receipt} is not an unhandled extra object of effect ${effectId} (unhandled: ${unhandledDuplicates(effect).join(', ') || 'none'})`, { effectId, receipt });
  }
  const { action, reason } = parsed.data;
  let compensationEffectId: string | undefined;
  if (action === 'compensate') {
    const undo = parts.shell.tool(effect.declared.tool)?.spec.undo;
    if (!undo) throw new EffectdError('invalid_command', `tool ${effect.declared.tool} declares no undo: compensate ${receipt} at the provider by hand, then record it with "action": "keep" and what you did`, { tool: effect.declared.tool });
    const { declared } = effect;
    const undone = await parts.shell.execute(
      { workflowId: declared.workflowId, step: `undo-duplicate:${declared.step}:${declared.slot}`, slot: receipt, tool: undo.tool, args: fillJson(undo.args, { args: declared.args, provider: {}, receipt }) },
      { tenant: declared.tenant, actor: caller.name },
    );
    if (undone.outcome.status === 'not_done') throw new EffectdError('illegal_transition', `the undo of ${receipt} did not happen: ${undone.outcome.message}`, { effectId, receipt, undo: undone.outcome });
    compensationEffectId = undone.outcome.effectId;
  }
  const handled = await parts.shell.handleDuplicate(effect, { receipt, action: action === 'compensate' ? 'compensated' : 'kept', handledBy: caller.name, reason, ...(compensationEffectId ? { compensationEffectId } : {}) });
  return detailOf(parts.reads, handled);
}

/**
 * A saga start that failed (the ledger, a defect) after the saga was recorded as started: said so,
 * with where to look, never "nothing was recorded" (issue 27, rule 4). A step's own failure says
 * what its effect holds already (src/shell/recorded-failure.ts) and passes unchanged.
 */
async function sagaFailure(parts: CommandParts, tenant: string, workflowId: string, name: string, error: unknown): Promise<never> {
  if (!saysNothingRecorded(error)) throw error;
  const view = await parts.reads.sagaRunner.view(tenant, workflowId).catch(() => undefined);
  if (!view) throw error;
  const base = asEffectdError(error);
  throw new EffectdError(base.code, `${failureText(error)}; saga ${name} of workflow ${workflowId} is recorded as started (${view.status}): do not assume it failed and do not start it again under another workflow: ask with GET /v1/sagas/${encodeURIComponent(workflowId)}; the same start again is answered from the ledger`, { ...base.details, workflowId, saga: { name, status: view.status } }, { cause: error });
}

function operatorOnly(caller: Caller, what: string): void {
  if (caller.role !== 'operator') throw new EffectdError('forbidden', `${caller.name} is an agent credential; only operator credentials may ${what}`);
}
