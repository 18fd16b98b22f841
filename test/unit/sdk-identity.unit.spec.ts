import { describe, expect, it } from 'vitest';
import { isEffectdError } from '../../src/core/errors.js';
import { effectIdentity, stepOf } from '../../src/sdk/identity.js';
import * as sdk from '../../src/sdk/index.js';

/** The error a call throws (or undefined). */
function thrown(run: () => unknown): Error | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

describe('the SDK\'s identity helpers take the ids that survive a crash (issue 32, rule 4)', () => {
  it('stepOf: the thread id is the workflow, the position of the model\'s call is the step', () => {
    expect(stepOf({ threadId: 'thread-7f3a', position: 3 })).toEqual({ workflowId: 'thread-7f3a', step: 'call-3' });
    expect(stepOf({ threadId: 'conv_68a1f0c2e4b88190', position: 0, call: 1 })).toEqual({ workflowId: 'conv_68a1f0c2e4b88190', step: 'call-0.1' });
    expect(stepOf({ threadId: 'chat-42', position: 5, slot: 2 })).toEqual({ workflowId: 'chat-42', step: 'call-5', slot: '2' });
    // LangGraph thread ids are often UUIDs (uuid4): a persisted thread id is stable, whatever its shape.
    expect(stepOf({ threadId: '1ef4d5a2-8c3e-4b8e-9a57-3c1f2d9e7b10', position: 12 }).workflowId).toBe('1ef4d5a2-8c3e-4b8e-9a57-3c1f2d9e7b10');
    // The same thread and position after a resume: the same identity.
    expect(stepOf({ threadId: 'thread-7f3a', position: 3 })).toEqual(stepOf({ threadId: 'thread-7f3a', position: 3 }));
  });

  it('effectIdentity: the ids a harness plans with pass, the step as a string', () => {
    expect(effectIdentity({ workflowId: 'renew-42', step: 1 })).toEqual({ workflowId: 'renew-42', step: '1' });
    expect(effectIdentity({ workflowId: 'thread-7f3a', step: 'call-3', slot: 'ana@example.com' })).toEqual({ workflowId: 'thread-7f3a', step: 'call-3', slot: 'ana@example.com' });
    expect(effectIdentity({ workflowId: 'wf-1', step: 'charge-invoice' }).step).toBe('charge-invoice');
  });

  it.each([
    ['call_abc123XYZ', /OpenAI tool-call id \(call_…\)/],
    ['toolu_01A09q90qw90lq917835lq9', /Anthropic tool-use id \(toolu_…\)/],
    ['fc_67ab1234cdef', /function-call item id/],
    ['chatcmpl-9xYz', /completion id/],
    ['msg_01XFDUDYJgAACzvnptvVoYEL', /model message id/],
    ['run-3b8f2a1c-1d2e-4f5a-9b8c-7d6e5f4a3b2c-0', /LangChain message id/],
    ['9b2c4e1a-7d3f-4a5b-8c6d-1e2f3a4b5c6d', /is a UUID/],
    ['1796191616874', /timestamp/],
  ])('refuses the per-call step %s, naming the position to use instead', (step, what) => {
    const error = thrown(() => effectIdentity({ workflowId: 'thread-7f3a', step }));
    expect(error).toBeDefined();
    expect(isEffectdError(error, 'invalid_command')).toBe(true);
    expect(error!.message).toMatch(what);
    expect(error!.message).toMatch(/^step ".*" /);
    expect(error!.message).toContain('Use the position of the model\'s call in the thread: stepOf({ threadId, position }) gives step "call-<position>"');
    expect((error as sdk.EffectdError).details).toMatchObject({ field: 'step', value: step });
  });

  it.each([
    ['12345', /process id \(a PID\)/],
    ['pid-4242', /process id \(a PID\)/],
    ['1796191616874', /timestamp taken when the process started/],
    ['call_abc123', /one tool call is no workflow/],
  ])('refuses the per-process or per-call workflow id %s, naming the thread id to use instead', (workflowId, what) => {
    const error = thrown(() => effectIdentity({ workflowId, step: 1 }));
    expect(isEffectdError(error, 'invalid_command')).toBe(true);
    expect(error!.message).toMatch(what);
    expect(error!.message).toContain('Use the id your checkpointer persists for the conversation: LangGraph\'s thread_id, the OpenAI Agents SDK session or conversation id, the Vercel AI SDK chat id');
    // stepOf refuses the same thread ids.
    expect(isEffectdError(thrown(() => stepOf({ threadId: workflowId, position: 0 })), 'invalid_command')).toBe(true);
  });

  it('refuses a tool-call id or a non-position as the position, an empty id, and a minted slot', () => {
    const asPosition = thrown(() => stepOf({ threadId: 'thread-7f3a', position: 'call_abc123' as unknown as number }));
    expect(asPosition!.message).toMatch(/^position "call_abc123" looks like an OpenAI tool-call id/);
    for (const position of [-1, 1.5, Number.NaN]) expect(thrown(() => stepOf({ threadId: 't', position }))!.message).toMatch(/is no position/);
    expect(thrown(() => stepOf({ threadId: 't', position: 1, call: 'toolu_01' as unknown as number }))!.message).toMatch(/^call "toolu_01" is no index.*never its tool-call id/);
    expect(thrown(() => effectIdentity({ workflowId: '', step: 1 }))!.message).toMatch(/^workflowId "" is empty/);
    expect(thrown(() => effectIdentity({ workflowId: 'w', step: ' ' }))!.message).toMatch(/^step " " is empty/);
    expect(thrown(() => effectIdentity({ workflowId: 'w', step: 1, slot: 'call_x1' }))!.message).toMatch(/^slot "call_x1" is empty or minted per call/);
  });

  it('is exported from the SDK', () => {
    expect(sdk.stepOf).toBe(stepOf);
    expect(sdk.effectIdentity).toBe(effectIdentity);
  });
});
