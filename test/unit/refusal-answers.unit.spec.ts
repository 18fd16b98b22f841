// Issue 25, rule 1: a refusal is its own answer kind on every door, never not_done, and its text
// invites a new step only when the step's recorded effect is proven not done.
import { create, toJsonString } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { EffectdError } from '../../src/core/errors.js';
import { errorResult } from '../../src/mcp/error-result.js';
import { toAnswer } from '../../src/sdk/effect-client.js';
import { refusalOfBody } from '../../src/sdk/refusals.js';
import { decodeOutcome, encodeRefusal } from '../../src/transport/wire/outcome-codec.js';
import { AgentStatus, EffectOutcomeSchema } from '../../src/transport/wire/effectd/v1/effectd_pb.js';

const recordedOf = (status: 'done' | 'not_done' | 'unknown') => ({
  done: { status, state: 'committed', receipt: 'ch_1', message: 'done: payments.charge for invoice I happened (receipt ch_1).' },
  unknown: { status, state: 'unknown', message: 'unknown: payments.charge for invoice I may or may not have happened. Do not start another payments.charge for invoice I.' },
  not_done: { status, state: 'failed_before_effect', message: 'not_done: payments.charge for invoice I did not happen (card_declined); it is safe to try again as a new step.' },
}[status]);

/** The shell's conflict, as src/shell/effect-runner.ts words it (refusalOf). */
function conflict(status: 'done' | 'not_done' | 'unknown'): EffectdError {
  const recorded = recordedOf(status);
  const next = status === 'not_done' ? ' A changed intent needs a new step.' : status === 'done' ? ' It is done: do not do it again under another step.' : ' Do not start another payments.charge for invoice I while it is checked.';
  return new EffectdError('intent_conflict', `effect eff_1 (workflow w, step 1, slot 0) was declared with other arguments; nothing was sent for this command. What step 1 recorded: ${recorded.message}${next}`, { effectId: 'eff_1', recorded });
}

describe('refusals on every door', () => {
  it('the SDK reads AGENT_STATUS_REFUSED as `refused` with the recorded effect, and an older effectd\'s NOT_DONE + error as `refused` too', () => {
    const answer = toAnswer(decodeOutcome(encodeRefusal({ code: 'intent_conflict', message: 'changed', effectId: 'eff_1', recorded: recordedOf('done') }, { correlationId: 'c' })));
    expect(answer).toMatchObject({ status: 'refused', correlationId: 'c', effectId: 'eff_1', error: { code: 'intent_conflict', recorded: { status: 'done', state: 'committed', receipt: 'ch_1' } } });
    const older = toAnswer(decodeOutcome(toJsonString(EffectOutcomeSchema, create(EffectOutcomeSchema, { correlationId: 'c', status: AgentStatus.NOT_DONE, message: 'not_done: this command was refused (invalid_command): bad', error: { code: 'invalid_command', message: 'bad', fields: [] } }))));
    expect(older).toMatchObject({ status: 'refused', error: { code: 'invalid_command' } });
    expect(older.error?.recorded).toBeUndefined();
    expect(toAnswer(decodeOutcome(toJsonString(EffectOutcomeSchema, create(EffectOutcomeSchema, { correlationId: 'c', status: AgentStatus.NOT_DONE, message: 'not_done: …' }))))).toMatchObject({ status: 'not_done' });
  });

  it('HttpEffectClient reads a 4xx body as `refused`, with `recorded` for a conflict', () => {
    const refused = refusalOfBody(422, { error: 'intent_conflict', action: 'conflict', message: 'was declared with other arguments', effectId: 'eff_1', recorded: recordedOf('unknown') }, 'invalid_command');
    expect(refused).toMatchObject({ status: 'refused', httpStatus: 422, effectId: 'eff_1', error: { code: 'intent_conflict', recorded: { status: 'unknown', state: 'unknown' } } });
    expect(refused.message).toMatch(/^refused: /);
    expect(refusalOfBody(400, { error: 'invalid_command', message: 'bad', fields: [{ path: 'args.amount', message: 'required' }] }, 'invalid_command').error.fields).toEqual([{ path: 'args.amount', message: 'required' }]);
    // A proxy's answer without effectd's body: the status says the code.
    expect(refusalOfBody(403, 'Forbidden', 'forbidden')).toMatchObject({ status: 'refused', error: { code: 'forbidden', fields: [] } });
  });

  it.each(['done', 'unknown'] as const)('MCP: a conflict with a recorded %s effect says refused and quotes it, never not_done nor a new step', (status) => {
    const result = errorResult(conflict(status));
    const text = (result.content[0] as { text: string }).text;
    expect(result.isError).toBe(true);
    expect(text).toMatch(/^refused: /);
    expect(text).toContain(recordedOf(status).message);
    expect(text).not.toMatch(/new step|^not_done/);
    expect(result.structuredContent).toMatchObject({ error: 'intent_conflict', action: 'conflict', recorded: { status } });
  });

  it('MCP: only a recorded not_done lets the conflict point to a new step, and says how', () => {
    const text = (errorResult(conflict('not_done')).content[0] as { text: string }).text;
    expect(text).toMatch(/^refused: /);
    expect(text).toContain('A new step is a new "dev.effectd/step" in _meta.');
  });

  it('MCP: bad input is refused, not not_done', () => {
    const text = (errorResult(new EffectdError('invalid_command', 'args.amount: required', { fields: [] })).content[0] as { text: string }).text;
    expect(text).toMatch(/^refused: nothing was done: /);
  });
});
