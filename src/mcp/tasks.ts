import type { CallToolResult } from '@modelcontextprotocol/server';
import type { AgentOutcome } from '../core/agent-outcome.js';
import { statusesAccepting } from '../core/effect-lifecycle.js';
import type { EffectStatus } from '../core/effect-status.js';
import { outcomeResult } from './results.js';

/**
 * The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, 2026-07-28 wire) over
 * effectd's ledger: a task IS an effect. Its id is the effect's id, journaled (`declared`) before
 * anything was sent, so a task is durable before the answer that names it, and a re-issued call
 * with the same `_meta` identity names the same task. Its status is read from the ledger on every
 * `tasks/get`; nothing about a task is kept anywhere else. A saga start's task is the saga (its
 * workflow: `sagaTaskId`). This module is the mapping only; the methods that read the gateway are
 * ./task-methods.ts. docs/mcp.md, "Tasks".
 */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

/** Where effectd says, in a `tasks/cancel` ack, whether the cancel was honoured and why. */
export const CANCEL_META = 'dev.effectd/cancel';

/** The JSON-RPC error a request from a client that did not declare the extension gets (tasks/get, update, cancel). */
export const MISSING_CAPABILITY = -32021;
/** An unknown task id (or one the caller may not see: the same words, as for effects). */
export const UNKNOWN_TASK = -32602;

/**
 * Whether this request declared the extension, in the per-request envelope (2026-07-28):
 * `_meta["io.modelcontextprotocol/clientCapabilities"].extensions["io.modelcontextprotocol/tasks"]`.
 * A server MUST NOT answer a task to a request that did not: 2025-era clients never do.
 */
export function declaresTasks(envelope: unknown): boolean {
  const capabilities = (envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES] as { extensions?: Record<string, unknown> } | undefined;
  const declared = capabilities?.extensions?.[TASKS_EXTENSION];
  return declared !== undefined && declared !== null;
}

const SAGA_TASK = 'saga/';

/** A saga start's task id: the saga's workflow, in its tenant (one saga per workflow). */
export function sagaTaskId(tenant: string, workflowId: string): string {
  return `${SAGA_TASK}${encodeURIComponent(tenant)}/${encodeURIComponent(workflowId)}`;
}

/** The saga a task id names, if it names one (undefined: an effect id, or nothing). */
export function sagaOfTask(taskId: string): { tenant: string; workflowId: string } | undefined {
  if (!taskId.startsWith(SAGA_TASK)) return undefined;
  const [tenant, workflowId, ...rest] = taskId.slice(SAGA_TASK.length).split('/');
  if (!tenant || !workflowId || rest.length > 0) return undefined;
  try {
    return { tenant: decodeURIComponent(tenant), workflowId: decodeURIComponent(workflowId) };
  } catch {
    return undefined;
  }
}

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The fields every task carries on the wire (`ttlMs` null: the task never expires). */
export interface TaskFields {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** A task as `tasks/get` answers it: `completed` carries the tool result today's `tools/call` would give. */
export type DetailedTask =
  | (TaskFields & { status: 'working' })
  | (TaskFields & { status: 'cancelled' })
  | (TaskFields & { status: 'completed'; result: CallToolResult & { resultType: 'complete' } });

/** The poll interval never goes below this: a task is a ledger read, and effectd's own checks back off from 250 ms. */
export const MIN_POLL_MS = 1_000;
/** While effectd itself is checking, a poll at most this far apart. */
export const MAX_POLL_MS = 10_000;
/** While a human decides: a human's answer takes minutes, not seconds. */
export const HUMAN_POLL_MS = 30_000;

/** When an effect's times are known: its first event and its latest (epoch ms). */
export interface TaskTimes {
  createdAt: number;
  lastUpdatedAt: number;
}

/** An outcome waits for a human (escalated, a poisoned key with no lookup left, a contract with no way to find out). */
export function withHuman(outcome: Pick<AgentOutcome, 'state' | 'checking'>): boolean {
  return outcome.state === 'escalated' || (outcome.checking?.startsWith('waiting for a human') ?? false);
}

/**
 * Where an effect's outcome puts its task:
 * - done, not_done → `completed`, with the tool result of today (`not_done` is `isError: true`:
 *   the tool answered; `failed` is only for protocol errors);
 * - unknown (declared, dispatching, unknown, held, terminal, escalated) → `working`; with a human,
 *   the status message begins "waiting for a human:". Never `input_required`: that status carries
 *   requests the CLIENT answers through `tasks/update`, and an operator's resolution is not one;
 * - withdrawn before anything was sent (an honoured `tasks/cancel`) → `cancelled`.
 */
export function taskOf(taskId: string, outcome: AgentOutcome, times: TaskTimes, now: number, withdrawn = false): DetailedTask {
  const fields = {
    taskId,
    createdAt: new Date(times.createdAt).toISOString(),
    lastUpdatedAt: new Date(times.lastUpdatedAt).toISOString(),
    ttlMs: null,
  };
  if (withdrawn) return { ...fields, status: 'cancelled', statusMessage: outcome.message };
  if (outcome.status === 'unknown') {
    const human = withHuman(outcome);
    return { ...fields, status: 'working', statusMessage: human ? `waiting for a human: ${outcome.message}` : outcome.message, pollIntervalMs: pollIntervalMs(outcome, times, now) };
  }
  return { ...fields, status: 'completed', statusMessage: outcome.message, result: { ...outcomeResult(outcome), resultType: 'complete' } };
}

/**
 * How often to ask: half the time the effect has been open, as effectd's own checks back off
 * (doubling from 250 ms), within [MIN_POLL_MS, MAX_POLL_MS] and not past the answer effectd
 * expects (`expectAnswerBy`); HUMAN_POLL_MS while a human decides.
 */
export function pollIntervalMs(outcome: Pick<AgentOutcome, 'state' | 'checking' | 'expectAnswerBy'>, times: TaskTimes, now: number): number {
  if (withHuman(outcome)) return HUMAN_POLL_MS;
  const expected = outcome.expectAnswerBy === undefined ? Number.NaN : Date.parse(outcome.expectAnswerBy) - now;
  const backoff = (now - times.createdAt) / 2;
  const wanted = Number.isFinite(expected) ? Math.min(backoff, expected) : backoff;
  return Math.round(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, wanted)));
}

/**
 * The answer to `tools/call` that creates the task: flat `Result & Task`, `resultType: "task"`. It
 * also carries today's `unknown` answer (`content`, `structuredContent`; a Result is open to more
 * members): the SDK checks every tool answer against the tool's outputSchema, and a client that
 * reads it as a plain tool result still hears "being checked: do not start another".
 */
export function createTaskResult(task: DetailedTask & { status: 'working' }, today: CallToolResult): CallToolResult {
  // The SDK's CallToolResult type predates task results; the wire takes this shape (CreateTaskResult).
  return { content: today.content, structuredContent: today.structuredContent, resultType: 'task', ...task } as unknown as CallToolResult;
}

/** Statuses in which nothing was ever sent: those whose lifecycle row accepts EffectWithdrawn, the only ones where a cancel is honoured. */
const NEVER_SENT: ReadonlySet<EffectStatus> = new Set(statusesAccepting('EffectWithdrawn'));

/** A cancel may be honoured: nothing was sent for the effect (the gateway's withdraw decides it on the ledger). */
export function withdrawable(outcome: Pick<AgentOutcome, 'state' | 'status'>): boolean {
  return outcome.status === 'unknown' && NEVER_SENT.has(outcome.state);
}

/** What `tasks/cancel` says about one effect, in `_meta["dev.effectd/cancel"]` (the ack is the same either way: the spec requires it). */
export interface CancelVerdict {
  honoured: boolean;
  reason: string;
}

/** The cancel that was honoured: nothing had been sent, and nothing ever will be. */
export function honouredCancel(outcome: Pick<AgentOutcome, 'tool' | 'target' | 'state'>): CancelVerdict {
  return { honoured: true, reason: `nothing had been sent for ${outcome.tool} for ${outcome.target} (${outcome.state}): withdrawn, it will never be sent; the task is cancelled and the effect not done` };
}

/** A cancel that is not honoured: the task completed already, or the effect was sent and the world cannot be cancelled. */
export function refusedCancel(outcome: Pick<AgentOutcome, 'status' | 'state' | 'tool' | 'target' | 'message'>): CancelVerdict {
  if (outcome.status !== 'unknown') return { honoured: false, reason: `the task is completed: ${outcome.message}` };
  return { honoured: false, reason: `${outcome.tool} for ${outcome.target} was sent to the provider (${outcome.state}); the world cannot be cancelled: effectd settles it and the task completes with what happened` };
}
