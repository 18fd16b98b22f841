import { ProtocolError, type CallToolResult, type McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AgentOutcome } from '../core/agent-outcome.js';
import { asEffectdError } from '../core/errors.js';
import type { Caller } from '../gateway/caller.js';
import type { Gateway } from '../gateway/gateway.js';
import { CANCEL_META, MISSING_CAPABILITY, TASKS_EXTENSION, UNKNOWN_TASK, createTaskResult, declaresTasks, honouredCancel, refusedCancel, taskOf, withdrawable, type CancelVerdict, type DetailedTask } from './tasks.js';

/**
 * The Tasks extension's methods on one MCP server, for one caller: the `tools/call` hook that
 * answers a task instead of `unknown`, and `tasks/get`, `tasks/update`, `tasks/cancel`, each read
 * from the ledger through the gateway (which authorizes by caller and tenant). The mapping itself
 * is ./tasks.ts.
 */
export interface TaskMethodParts {
  gateway: Pick<Gateway, 'effect' | 'withdraw'>;
  caller: Caller;
  now: () => number;
}

type EffectDetail = Awaited<ReturnType<Gateway['effect']>>;

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

/** The effect's task, from its detail: created at its first event, updated at its latest. */
function taskFromDetail(detail: EffectDetail, now: number): DetailedTask {
  const first = detail.evidence[0]?.at;
  const last = detail.evidence[detail.evidence.length - 1]?.at;
  const times = { createdAt: first ? Date.parse(first) : now, lastUpdatedAt: last ? Date.parse(last) : now };
  return taskOf(outcomeOf(detail), times, now, detail.evidence.some((e) => e.type === 'EffectWithdrawn'));
}

/**
 * A cancel: honoured where nothing was sent (the gateway withdraws the effect, deciding on the
 * ledger as it stands: a claim that won the race refuses it), refused otherwise, with the reason.
 */
async function cancel(parts: TaskMethodParts, detail: EffectDetail): Promise<CancelVerdict> {
  const outcome = outcomeOf(detail);
  if (!withdrawable(outcome)) return refusedCancel(outcome);
  try {
    await parts.gateway.withdraw(parts.caller, detail.effectId, 'cancelled by the client (MCP tasks/cancel)');
    return honouredCancel(outcome);
  } catch (thrown) {
    const error = asEffectdError(thrown);
    if (error.code === 'illegal_transition' || error.code === 'forbidden') return { honoured: false, reason: error.message };
    throw thrown;
  }
}

/** The effect a task names, or -32602 (an unknown id and another tenant's are answered alike). */
async function taskEffect(parts: TaskMethodParts, taskId: string): Promise<EffectDetail> {
  try {
    return await parts.gateway.effect(parts.caller, taskId);
  } catch (thrown) {
    const error = asEffectdError(thrown);
    if (error.code === 'not_found' || error.code === 'invalid_command') throw new ProtocolError(UNKNOWN_TASK, `no task ${taskId}`, { taskId });
    throw thrown;
  }
}

function requireDeclared(envelope: unknown, method: string): void {
  if (!declaresTasks(envelope)) {
    throw new ProtocolError(MISSING_CAPABILITY, `${method} needs the ${TASKS_EXTENSION} extension declared in the request's client capabilities`, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  }
}

/**
 * The `tools/call` hook: for a request that declared the extension, an effect still unknown when
 * the answer budget ended is answered as a task (its id the effect's). The effect is read back
 * first, so the task is the ledger's as of now: one that settled meanwhile is answered as today.
 * Every other answer (done, not_done, a refusal, a client without the extension) is today's.
 */
export async function offerTask(parts: TaskMethodParts, envelope: unknown, outcome: AgentOutcome, result: CallToolResult): Promise<CallToolResult> {
  if (outcome.status !== 'unknown' || outcome.effectId === '' || !declaresTasks(envelope)) return result;
  const task = taskFromDetail(await parts.gateway.effect(parts.caller, outcome.effectId), parts.now());
  return task.status === 'working' ? createTaskResult(task, result) : result;
}

const taskIdParams = z.looseObject({ taskId: z.string().min(1) });
const anyResult = z.looseObject({});

/** Registers tasks/get, tasks/update and tasks/cancel, and advertises the extension in `server/discover`. */
export function registerTaskMethods(server: McpServer, parts: TaskMethodParts): void {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } } as never);

  server.server.setRequestHandler('tasks/get', { params: taskIdParams, result: anyResult }, async ({ taskId }, ctx) => {
    requireDeclared(ctx.mcpReq.envelope, 'tasks/get');
    return { resultType: 'complete', ...taskFromDetail(await taskEffect(parts, taskId), parts.now()) };
  });

  // effectd never asks the client for input (no `input_required`): an update has nothing to answer.
  server.server.setRequestHandler('tasks/update', { params: taskIdParams, result: anyResult }, async ({ taskId }, ctx) => {
    requireDeclared(ctx.mcpReq.envelope, 'tasks/update');
    await taskEffect(parts, taskId);
    return { resultType: 'complete' };
  });

  // The spec requires an empty ack whether or not the cancel is honoured: the verdict and its reason ride in _meta.
  server.server.setRequestHandler('tasks/cancel', { params: taskIdParams, result: anyResult }, async ({ taskId }, ctx) => {
    requireDeclared(ctx.mcpReq.envelope, 'tasks/cancel');
    const verdict = await cancel(parts, await taskEffect(parts, taskId));
    return { resultType: 'complete', _meta: { [CANCEL_META]: verdict } };
  });
}
