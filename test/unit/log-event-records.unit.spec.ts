import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { workflowStream } from '../../src/core/streams.js';
import { eventLogRecords } from '../../src/logging/event-log.js';
import { declared, finished, started } from '../support/events.js';

const stream = workflowStream('t1', 'wf-1');
const KEY = 'efd-key-1-0123456789abcdef';

/** The records of `appended`, folded after `before` as the workflow store does. */
function recordsOf(before: LedgerEvent[], appended: LedgerEvent[]) {
  return eventLogRecords(stream, appended, foldWorkflow([...before, ...appended]));
}

describe('ledger events as log records', () => {
  const history: LedgerEvent[] = [declared('eff_1'), started('eff_1', 1, 2_000, { providerKey: KEY })];
  const ids = { effectId: 'eff_1', workflowId: 'wf-1', tenant: 't1', tool: 'payments.charge' };

  it('an escalation is a warning with the effect\'s ids', () => {
    const lost = finished('eff_1', 1, 3_000, 'unknown');
    const [record] = recordsOf([...history, lost], [{ type: 'EffectEscalated', v: 1, at: 4_000, effectId: 'eff_1', reason: 'no key, no lookup', evidence: `GET /v1/charges?key=${KEY}` }]);
    expect(record).toMatchObject({ level: 'warn', msg: 'escalated to a human: payments.charge for inv-1: no key, no lookup', fields: { event: 'EffectEscalated', ...ids } });
    expect(JSON.stringify(record)).not.toContain(KEY);
  });

  it('a terminal failure is a warning; a provider key quoted in its reason is blanked', () => {
    const [record] = recordsOf(history, [{ type: 'AttemptFinished', v: 1, at: 3_000, effectId: 'eff_1', attempt: 1, outcome: 'terminal_failure', httpStatus: 500, replayed: true, reason: `the provider replays a stored HTTP 500 under this key: {"key":"${KEY}"}`, latencyMs: 3 }]);
    expect(record).toMatchObject({ level: 'warn', fields: { event: 'AttemptFinished', outcome: 'terminal_failure', httpStatus: 500, ...ids } });
    expect(JSON.stringify(record)).not.toContain(KEY);
    expect(record!.msg).toContain('[provider key]');
  });

  it('a resolution names the operator as the actor; each reconciliation check its verdict', () => {
    const open = [...history, finished('eff_1', 1, 3_000, 'unknown')];
    const [check] = recordsOf(open, [{ type: 'ReconciliationChecked', v: 1, at: 3_500, effectId: 'eff_1', method: 'lookup-by-reference', asked: `GET /v1/charges/search?key=${KEY}`, seen: '0 matches', verdict: 'pending' }]);
    expect(check).toMatchObject({ level: 'info', fields: { event: 'ReconciliationChecked', verdict: 'pending', method: 'lookup-by-reference', ...ids } });
    expect(JSON.stringify(check)).not.toContain(KEY);
    const escalated: LedgerEvent = { type: 'EffectEscalated', v: 1, at: 4_000, effectId: 'eff_1', reason: 'r', evidence: 'e' };
    const [resolved] = recordsOf([...open, escalated], [{ type: 'EffectResolved', v: 1, at: 5_000, effectId: 'eff_1', resolvedBy: 'ops-anna', outcome: 'committed', receipt: 'ch_9', reason: 'seen in the dashboard' }]);
    expect(resolved).toMatchObject({ level: 'info', fields: { event: 'EffectResolved', actor: 'ops-anna', outcome: 'committed', receipt: 'ch_9', ...ids } });
  });

  it('a saga\'s end carries its state and the workflow\'s ids; a failed compensation is an error', () => {
    const saga: LedgerEvent = { type: 'SagaStarted', v: 1, at: 1, saga: 'trip', version: 1, tenant: 't1', workflowId: 'wf-1', input: {}, startedBy: 'agent' };
    const compensating: LedgerEvent = { type: 'SagaCompensating', v: 1, at: 2, failedStep: 'hotel', reason: 'refused' };
    const [ended] = recordsOf([saga, compensating], [{ type: 'SagaFinished', v: 1, at: 3, outcome: 'compensated', reason: 'undone' }]);
    expect(ended).toMatchObject({ level: 'info', msg: 'saga trip ended: compensated (undone)', fields: { event: 'SagaFinished', saga: 'trip', state: 'compensated', workflowId: 'wf-1', tenant: 't1' } });
    const [failed] = recordsOf([saga, compensating], [{ type: 'SagaFinished', v: 1, at: 3, outcome: 'compensation_failed', reason: 'refund refused' }]);
    expect(failed!.level).toBe('error');
  });

  it('a hold, its release and a handled duplicate are info with their actor; a detected duplicate is an error', () => {
    const held: LedgerEvent = { type: 'EffectHeld', v: 1, at: 2_500, effectId: 'eff_2', matchedEffectId: 'eff_1', matchedStep: '1', scope: 'workflow', basis: 'content' };
    const before = [...history, finished('eff_1', 1, 3_000, 'committed', 'ch_1'), declared('eff_2', 2_400, { step: '2' })];
    const [hold] = recordsOf(before, [held]);
    expect(hold).toMatchObject({ level: 'info', fields: { event: 'EffectHeld', effectId: 'eff_2', matchedEffectId: 'eff_1', workflowId: 'wf-1', tenant: 't1' } });
    const [release] = recordsOf([...before, held], [{ type: 'EffectReleased', v: 1, at: 2_600, effectId: 'eff_2', releasedBy: 'ops-bo', reason: 'a second charge was intended' }]);
    expect(release).toMatchObject({ level: 'info', fields: { event: 'EffectReleased', effectId: 'eff_2', actor: 'ops-bo' } });
    const resent = [declared('eff_3'), started('eff_3', 1, 2_000, { providerKey: KEY }), finished('eff_3', 1, 2_100, 'unknown'), started('eff_3', 2, 2_200, { providerKey: KEY }), finished('eff_3', 2, 2_300, 'committed', 'ch_1')];
    const duplicate: LedgerEvent = { type: 'DuplicateDetected', v: 1, at: 2_400, effectId: 'eff_3', receipts: ['ch_1', 'ch_2'], asked: `GET ?key=${KEY}`, seen: '2 match(es)' };
    const [detected] = recordsOf(resent, [duplicate]);
    expect(detected).toMatchObject({ level: 'error', fields: { event: 'DuplicateDetected', effectId: 'eff_3', receipts: ['ch_1', 'ch_2'] } });
    const [handled] = recordsOf([...resent, duplicate], [{ type: 'DuplicateHandled', v: 1, at: 2_500, effectId: 'eff_3', receipt: 'ch_2', action: 'kept', handledBy: 'ops-bo', reason: 'customer asked' }]);
    expect(handled).toMatchObject({ level: 'info', fields: { event: 'DuplicateHandled', actor: 'ops-bo', receipt: 'ch_2', action: 'kept' } });
    expect(JSON.stringify([detected, handled])).not.toContain(KEY);
  });

  it('routine progress (declared, attempt started, committed) is debug only, and no record carries the key or the request', () => {
    const records = recordsOf([], [...history, { ...finished('eff_1', 1, 3_000, 'committed', 'ch_1') }]);
    expect(records.map((r) => r.level)).toEqual(['debug', 'debug', 'debug']);
    expect(JSON.stringify(records)).not.toContain(KEY);
  });
});
