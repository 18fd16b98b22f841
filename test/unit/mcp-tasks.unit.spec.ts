import { describe, expect, it } from 'vitest';
import type { AgentOutcome } from '../../src/core/agent-outcome.js';
import { declaresTasks, HUMAN_POLL_MS, MAX_POLL_MS, MIN_POLL_MS, pollIntervalMs, refusedCancel, sagaOfTask, sagaTaskId, taskOf, TASKS_EXTENSION, withdrawable } from '../../src/mcp/tasks.js';

/** The MCP Tasks mapping (src/mcp/tasks.ts): an effect's outcome as a task, no I/O. */
const base = { effectId: 'eff_1', tool: 'payments.charge', target: 'invoice 7', replayed: true } as const;
const unknown = (extra: Partial<AgentOutcome> = {}): AgentOutcome => ({ ...base, status: 'unknown', state: 'unknown', message: 'unknown: … Do not start another payments.charge for invoice 7.', ...extra });
const times = { createdAt: 10_000, lastUpdatedAt: 11_000 };

describe('MCP tasks: the mapping from an effect\'s outcome', () => {
  it('only a request whose per-request capabilities name the extension declares it', () => {
    expect(declaresTasks({ 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } } })).toBe(true);
    expect(declaresTasks({ 'io.modelcontextprotocol/clientCapabilities': { extensions: {} } })).toBe(false);
    expect(declaresTasks({ 'io.modelcontextprotocol/clientCapabilities': {} })).toBe(false);
    expect(declaresTasks(undefined)).toBe(false);
  });

  it('unknown → working with today\'s message; with a human → "waiting for a human:"; done → completed with the tool result; not_done → completed, isError', () => {
    expect(taskOf('eff_1', unknown(), times, 12_000)).toMatchObject({ taskId: 'eff_1', status: 'working', statusMessage: unknown().message, createdAt: new Date(10_000).toISOString(), lastUpdatedAt: new Date(11_000).toISOString(), ttlMs: null });
    expect(taskOf('eff_1', unknown({ state: 'escalated' }), times, 12_000)).toMatchObject({ status: 'working', statusMessage: expect.stringMatching(/^waiting for a human: unknown: /), pollIntervalMs: HUMAN_POLL_MS });
    const done = taskOf('eff_1', { ...base, status: 'done', state: 'committed', receipt: 'ch_1', message: 'done: … (receipt ch_1).' }, times, 12_000);
    expect(done).toMatchObject({ status: 'completed', result: { resultType: 'complete', isError: false, structuredContent: { status: 'done', receipt: 'ch_1' } } });
    const notDone = taskOf('eff_1', { ...base, status: 'not_done', state: 'failed_before_effect', message: 'not_done: refused.' }, times, 12_000);
    expect(notDone).toMatchObject({ status: 'completed', result: { resultType: 'complete', isError: true, structuredContent: { status: 'not_done' } } });
    expect(taskOf('eff_1', { ...base, status: 'not_done', state: 'failed_before_effect', message: 'not_done: withdrawn' }, times, 12_000, true)).toMatchObject({ status: 'cancelled' });
  });

  it('polls at half the time it has been open, within the floor and ceiling, never past the expected answer', () => {
    expect(pollIntervalMs(unknown(), times, 10_500)).toBe(MIN_POLL_MS);
    expect(pollIntervalMs(unknown(), times, 16_000)).toBe(3_000);
    expect(pollIntervalMs(unknown(), times, 100_000)).toBe(MAX_POLL_MS);
    expect(pollIntervalMs(unknown({ expectAnswerBy: new Date(17_500).toISOString() }), times, 16_000)).toBe(1_500);
    expect(pollIntervalMs(unknown({ checking: 'waiting for a human: the tool has no lookup' }), times, 16_000)).toBe(HUMAN_POLL_MS);
  });

  it('a cancel may be honoured only where nothing was sent; a dispatched effect is refused with the reason', () => {
    expect(withdrawable(unknown({ state: 'held' }))).toBe(true);
    expect(withdrawable(unknown({ state: 'declared' }))).toBe(true);
    for (const state of ['dispatching', 'unknown', 'escalated', 'terminal_failure'] as const) expect(withdrawable(unknown({ state })), state).toBe(false);
    expect(refusedCancel(unknown({ state: 'dispatching' }))).toEqual({ honoured: false, reason: expect.stringMatching(/was sent to the provider \(dispatching\); the world cannot be cancelled/) });
  });

  it('a saga start\'s task id names its tenant and workflow, and nothing else parses as one', () => {
    const id = sagaTaskId('acme corp', 'wf/1:x');
    expect(sagaOfTask(id)).toEqual({ tenant: 'acme corp', workflowId: 'wf/1:x' });
    expect(sagaOfTask('eff_1')).toBeUndefined();
    expect(sagaOfTask('saga/only-tenant')).toBeUndefined();
    expect(sagaOfTask('saga/%E0%A4%A/wf')).toBeUndefined();
  });
});
