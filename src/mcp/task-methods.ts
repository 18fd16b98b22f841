import { ProtocolError, type CallToolResult, type McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AgentOutcome } from '../core/agent-outcome.js';
import { asEffectdError } from '../core/errors.js';
import type { Caller } from '../gateway/caller.js';
import type { Gateway, Submitted } from '../gateway/gateway.js';
import { CANCEL_META, MISSING_CAPABILITY, TASKS_EXTENSION, UNKNOWN_TASK, createTaskResult, declaresTasks, honouredCancel, refusedCancel, sagaOfTask, sagaTaskId, taskOf, withdrawable, type CancelVerdict, type DetailedTask } from './tasks.js';

/**
 * The Tasks extension's methods on one MCP server, for one caller: the `tools/call` hook that
 * answers a task instead of `unknown`, and `tasks/get`, `tasks/update`, `tasks/cancel`, each read
 * from the ledger through the gateway (which authorizes by caller and tenant). The mapping itself
 * is ./tasks.ts.
 */
export interface TaskMethodParts {
  gateway: Pick<Gateway, 'effect' | 'withdraw' | 'sagaAnswer'>;
  caller: Caller;
  now: () => number;
}

type EffectDetail = Awaited<ReturnType<Gateway['effect']>>;

/** What a task is read from: an effect's detail, or a saga's answer. */
type TaskSource =
  | { kind: 'effect'; taskId: string; detail: EffectDetail; outcome: AgentOutcome }
  | { kind: 'saga'; taskId: string; outcome: AgentOutcome; startedAt: number; lastUpdatedAt: number };

/** The agent's outcome inside an effect's detail: exactly what `tools/call` answers (no workflow, args or evidence). */
function outcomeOf(detail: EffectDetail): AgentOutcome {
  const { status, effectId, state, tool, target, receipt, reason, replayed, reference, checking, expectAnswerBy, message } = detail;
  return {
    status, effectId, state, tool, target, replayed, message,
    ...(receipt !== undefined ? { receipt } : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(reference !== undefined ? { reference } : {}),
    ...(checking !== undefined ? { checking } : {}),
    ...(expectAnswerBy !== undefined ? { expectAnswerBy } : {}),
  };
}

/** The task as the ledger has it now: an effect's is created at its first event and updated at its latest. */
function taskFrom(source: TaskSource, now: number): DetailedTask {
  if (source.kind === 'saga') return taskOf(source.taskId, source.outcome, { createdAt: source.startedAt, lastUpdatedAt: source.lastUpdatedAt }, now);
  const { evidence } = source.detail;
  const first = evidence[0]?.at;
  const last = evidence[evidence.length - 1]?.at;
  const times = { createdAt: first ? Date.parse(first) : now, lastUpdatedAt: last ? Date.parse(last) : now };
  return taskOf(source.taskId, source.outcome, times, now, evidence.some((e) => e.type === 'EffectWithdrawn'));
}

/** What a task id names, read now (`strict`: an unknown id, or another tenant's, is -32602 alike). */
async function read(parts: TaskMethodParts, taskId: string): Promise<TaskSource> {
  try {
    const saga = sagaOfTask(taskId);
    if (saga) return { kind: 'saga', taskId, ...(await parts.gateway.sagaAnswer(parts.caller, saga.workflowId, saga.tenant)) };
    const detail = await parts.gateway.effect(parts.caller, taskId);
    return { kind: 'effect', taskId, detail, outcome: outcomeOf(detail) };
  } catch (thrown) {
    const error = asEffectdError(thrown);
    if (error.code === 'not_found' || error.code === 'invalid_command' || error.code === 'forbidden') throw new ProtocolError(UNKNOWN_TASK, `no task ${taskId}`, { taskId });
    throw thrown;
  }
}

/**
 * A cancel: honoured where nothing was sent (the gateway withdraws the effect, deciding on the
 * ledger as it stands: a claim that won the race refuses it), refused otherwise, with the reason.
 * A saga is never cancelled from outside: its steps are effects, carried to completion or compensation.
 */
async function cancel(parts: TaskMethodParts, source: TaskSource): Promise<CancelVerdict> {
  const { outcome } = source;
  if (source.kind === 'saga') {
    return outcome.status === 'unknown'
      ? { honoured: false, reason: `a saga is not cancelled from outside: its steps are effects, some may be in the world already; effectd carries ${outcome.tool} for ${outcome.target} on to completion or compensation` }
      : refusedCancel(outcome);
  }
  if (!withdrawable(outcome)) return refusedCancel(outcome);
  try {
    await parts.gateway.withdraw(parts.caller, source.taskId, 'cancelled by the client (MCP tasks/cancel)');
    return honouredCancel(outcome);
  } catch (thrown) {
    const error = asEffectdError(thrown);
    if (error.code === 'illegal_transition' || error.code === 'forbidden') return { honoured: false, reason: error.message };
    throw thrown;
  }
}

function requireDeclared(envelope: unknown, method: string): void {
  if (!declaresTasks(envelope)) {
    throw new ProtocolError(MISSING_CAPABILITY, `${method} needs the ${TASKS_EXTENSION} extension declared in the request's client capabilities`, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  }
}

/**
 * The `tools/call` hook: for a request that declared the extension, an effect (or a saga) still
 * unknown when the answer budget ended is answered as a task: its id the effect's (the saga's
 * workflow for a saga start). It is read back first, so the task is the ledger's as of now: one
 * that settled meanwhile is answered as today. Every other answer (done, not_done, a refusal, a
 * client without the extension) is today's.
 */
export async function offerTask(parts: TaskMethodParts, envelope: unknown, submitted: Pick<Submitted, 'outcome' | 'disposition' | 'address'>, result: CallToolResult): Promise<CallToolResult> {
  if (submitted.outcome.status !== 'unknown' || !declaresTasks(envelope)) return result;
  const { tenant, workflowId } = submitted.address;
  const taskId = submitted.disposition === 'saga' ? sagaTaskId(tenant, workflowId) : submitted.outcome.effectId;
  const task = taskFrom(await read(parts, taskId), parts.now());
  return task.status === 'working' ? createTaskResult(task, result) : result;
}

const taskIdParams = z.looseObject({ taskId: z.string().min(1) });
const anyResult = z.looseObject({});

/** Registers tasks/get, tasks/update and tasks/cancel, and advertises the extension in `server/discover`. */
export function registerTaskMethods(server: McpServer, parts: TaskMethodParts): void {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } } as never);

  server.server.setRequestHandler('tasks/get', { params: taskIdParams, result: anyResult }, async ({ taskId }, ctx) => {
    requireDeclared(ctx.mcpReq.envelope, 'tasks/get');
    return { resultType: 'complete', ...taskFrom(await read(parts, taskId), parts.now()) };
  });

  // effectd never asks the client for input (no `input_required`): an update has nothing to answer.
  server.server.setRequestHandler('tasks/update', { params: taskIdParams, result: anyResult }, async ({ taskId }, ctx) => {
    requireDeclared(ctx.mcpReq.envelope, 'tasks/update');
    await read(parts, taskId);
    return { resultType: 'complete' };
  });

  // The spec requires an empty ack whether or not the cancel is honoured: the verdict and its reason ride in _meta.
  server.server.setRequestHandler('tasks/cancel', { params: taskIdParams, result: anyResult }, async ({ taskId }, ctx) => {
    requireDeclared(ctx.mcpReq.envelope, 'tasks/cancel');
    const verdict = await cancel(parts, await read(parts, taskId));
    return { resultType: 'complete', _meta: { [CANCEL_META]: verdict } };
  });
}
