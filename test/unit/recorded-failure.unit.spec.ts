import { describe, expect, it } from 'vitest';
import type { AgentOutcome } from '../../src/core/agent-outcome.js';
import { asEffectdError, EffectdError, failureText, NOTHING_RECORDED } from '../../src/core/errors.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { recordedFailure } from '../../src/shell/recorded-failure.js';
import { declared, started } from '../support/events.js';

/** Issue 27, rule 4: a failure's text says what the ledger holds for the effect. */
const E = 'eff_rf';
const full = new Error('database or disk is full');

describe('recordedFailure: the answer to a failure says only what is true', () => {
  it('nothing recorded: the failure as it was ("nothing was recorded; send the same command again")', () => {
    const error = recordedFailure(full, E, undefined, undefined);
    expect(error).toBe(full);
    expect(asEffectdError(error).message).toBe(`a part effectd depends on failed: database or disk is full; ${NOTHING_RECORDED}`);
  });

  it('refusals and conflicts pass unchanged, whatever the ledger holds', () => {
    const effect = foldWorkflow([declared(E), started(E, 1, 1_000)]).effects.get(E)!;
    const conflict = new EffectdError('intent_conflict', 'other arguments');
    expect(recordedFailure(conflict, E, effect, undefined)).toBe(conflict);
  });

  it('an attempt claimed and sent: says so, with the effect id and `recorded`, never "nothing was recorded"', () => {
    const error = recordedFailure(full, E, undefined, undefined, { sent: { attempt: 2 } }) as EffectdError;
    expect(error.code).toBe('unavailable');
    expect(error.message).toBe(`a part effectd depends on failed: database or disk is full; attempt 2 of effect ${E} was recorded as started and handed to the provider, but its outcome could not be recorded: do not assume it failed and do not start it again under another step: ask with GET /v1/effects/${E} (reference ${E}); the same command sent again is answered from the ledger and never sent twice while its outcome is unknown`);
    expect(error.details).toMatchObject({ effectId: E, reference: E, retryAfterMs: 1_000, recorded: { status: 'unknown' } });
    expect(failureText(error)).toBe(error.message);
  });

  it('what the ledger holds, read after the failure: the state and the attempt', () => {
    const effect = foldWorkflow([declared(E), started(E, 1, 1_000)]).effects.get(E)!;
    const answer = { status: 'unknown', state: 'dispatching', message: 'unknown: …' } as AgentOutcome;
    const error = recordedFailure(full, E, effect, answer) as EffectdError;
    expect(error.message).toMatch(/effect eff_rf is recorded \(state dispatching, attempt 1 recorded as started\): do not assume it failed/);
    expect(error.details.recorded).toEqual({ status: 'unknown', state: 'dispatching', message: 'unknown: …' });
  });

  it('a defect after the claim (500) says what was recorded too', () => {
    const error = recordedFailure(new TypeError('Invalid URL'), E, undefined, undefined, { sent: { attempt: 1 } }) as EffectdError;
    expect(error.code).toBe('internal');
    expect(error.message).toMatch(/^effectd hit a defect: Invalid URL; attempt 1 of effect eff_rf was recorded as started/);
  });
});
