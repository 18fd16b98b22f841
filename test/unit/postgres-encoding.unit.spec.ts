// The PostgreSQL ledger's compact stored form: every event comes back exactly as it went in, old
// (verbatim) rows still read, and the stored form is smaller.
import { describe, expect, it } from 'vitest';
import { decodeLedgerEvent, type LedgerEvent } from '../../src/core/events.js';
import { workflowStream } from '../../src/core/streams.js';
import { decodeStoredEvent, encodeStoredEvent } from '../../src/ledger/postgres-encoding.js';

const effectId = 'eff_1622bfa41f72d3c164b8cb0028be3867dbe59e7b';
const at = 1_796_125_018_423;
const stream = workflowStream('default', 'wl-1');

const everyKind: LedgerEvent[] = [
  {
    type: 'EffectDeclared', v: 1, at, effectId, tenant: 'default', workflowId: 'wl-1', step: '1', slot: '0', tool: 'payments.charge', contractVersion: 1,
    intentDigest: '56c702844d7ed68bb64027e73e1661ee3a6033f594947c16535b2f39549c11a0', args: { amount: 4901, currency: 'usd', v: 2, a: 'x', '~t': 1, nested: { at: 1 } },
    target: 'invoice INV-1', principal: 'default-agent', onBehalfOf: 'alice', repeat: { reason: 'again' }, contentKey: 'content-79094e13cc09bfcb55a6a450bb623350',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  },
  {
    type: 'AttemptStarted', v: 1, at, effectId, attempt: 1, instanceId: 'effectd-1-7f26369c', providerKey: 'efd-mnV5CB0pB_Vb4gj14c6KSIF9Wy9s4bINYzBQtfrrYLc',
    leaseUntil: at + 12_000, keyExpiresAt: null, request: { method: 'POST', path: '/v1/charges', body: '{"amount":4901}', encoding: 'json', keyHeader: 'Idempotency-Key' },
  },
  { type: 'AttemptFinished', v: 1, at, effectId, attempt: 1, outcome: 'committed', receipt: 'ch_1', httpStatus: 200, replayed: false, reason: 'HTTP 200', latencyMs: 4.775 },
  { type: 'AttemptFinished', v: 1, at, effectId, attempt: 2, outcome: 'failed_before_effect', neverSent: true, replayed: true, reason: 'refused', latencyMs: 0 },
  { type: 'ReconciliationChecked', v: 1, at, effectId, method: 'lookup-by-key', asked: 'GET /x', seen: '200', verdict: 'committed', receipt: 'ch_1' },
  { type: 'EffectEscalated', v: 1, at, effectId, reason: 'r', evidence: 'e' },
  { type: 'EffectResolved', v: 1, at, effectId, resolvedBy: 'op', outcome: 'committed', receipt: 'ch_1', reason: 'r' },
  { type: 'EffectHeld', v: 1, at, effectId, matchedEffectId: 'eff_00', matchedStep: '2', matchedWorkflowId: 'wl-2', scope: 'tenant', basis: 'target' },
  { type: 'EffectReleased', v: 1, at, effectId, releasedBy: 'op', reason: 'r' },
  { type: 'DuplicateDetected', v: 1, at, effectId, receipts: ['a', 'b'], asked: 'q', seen: 's' },
  { type: 'ResendAudited', v: 1, at, effectId, verdict: 'single', asked: 'q', seen: 's' },
  { type: 'DuplicateHandled', v: 1, at, effectId, receipt: 'b', action: 'compensated', handledBy: 'op', reason: 'r', compensationEffectId: 'eff_2' },
  { type: 'DecisionRecorded', v: 1, at, step: '1', tool: 'payments.charge', args: { amount: 1 }, decidedBy: 'model', recordedBy: 'agent' },
  { type: 'SagaStarted', v: 1, at, saga: 'checkout', version: 1, tenant: 'default', workflowId: 'wl-1', input: { a: 1 }, startedBy: 'agent' },
  { type: 'SagaCompensating', v: 1, at, failedStep: '2', reason: 'r' },
  { type: 'SagaFinished', v: 1, at, outcome: 'compensated', reason: 'r' },
];

/** Through the column and back: JSON (as jsonb would hand it back), then the domain decoder. */
function roundTrip(onStream: string, event: LedgerEvent): LedgerEvent {
  const stored = JSON.parse(JSON.stringify(encodeStoredEvent(onStream, event))) as unknown;
  return decodeLedgerEvent(event.type, decodeStoredEvent(onStream, event.type, stored));
}

describe('PostgreSQL stored event encoding', () => {
  it('gives back every kind of event exactly, in its workflow stream and in any other stream', () => {
    for (const event of everyKind) {
      expect(roundTrip(stream, event)).toEqual(event);
      expect(roundTrip('some-other-stream', event)).toEqual(event);
    }
  });

  it('leaves out the tenant and workflow only when the stream spells them, escaped names included', () => {
    const declared = everyKind[0] as Extract<LedgerEvent, { type: 'EffectDeclared' }>;
    expect(encodeStoredEvent(stream, declared)).not.toHaveProperty('t');
    expect(encodeStoredEvent(stream, declared)).not.toHaveProperty('w');
    expect(encodeStoredEvent(workflowStream('default', 'wl-2'), declared)).toMatchObject({ t: 'default', w: 'wl-1' });
    const odd = { ...declared, tenant: 'a/b c', workflowId: 'wf/ü%20' };
    expect(encodeStoredEvent(workflowStream(odd.tenant, odd.workflowId), odd)).not.toHaveProperty('t');
    expect(roundTrip(workflowStream(odd.tenant, odd.workflowId), odd)).toEqual(odd);
    const lone = { ...declared, tenant: '\ud800' };
    expect(roundTrip('workflow-x/y', lone)).toEqual(lone);
  });

  it('stores ids that are not the usual prefix + lowercase hex verbatim', () => {
    for (const id of ['eff_1622BFA41F72D3C164B8CB0028BE3867DBE59E7B', 'eff_12', 'e1', 'eff_1622bfa41f72d3c164b8cb0028be3867dbe59e7g']) {
      const event: LedgerEvent = { type: 'EffectEscalated', v: 1, at, effectId: id, reason: 'r', evidence: 'e' };
      expect(encodeStoredEvent(stream, event)).toMatchObject({ e: id });
      expect(roundTrip(stream, event)).toEqual(event);
    }
  });

  it('stores a request body that quotes the effect id as the parts around it, and an HTTP reason by its status', () => {
    for (const body of [`{"ref":"${effectId}"}`, `${effectId}`, `${effectId}x${effectId}${effectId}`, '{"no":"ref"}', '']) {
      const event: LedgerEvent = { ...(everyKind[1] as Extract<LedgerEvent, { type: 'AttemptStarted' }>), request: { method: 'POST', path: '/p', body, encoding: 'form' } };
      expect(roundTrip(stream, event)).toEqual(event);
      expect(roundTrip(stream, { ...event, effectId: 'e1' })).toEqual({ ...event, effectId: 'e1' });
    }
    const quoting = { ...(everyKind[1] as Extract<LedgerEvent, { type: 'AttemptStarted' }>), request: { method: 'POST', path: '/p', body: `{"ref":"${effectId}"}`, encoding: 'json' as const } };
    expect(JSON.stringify(encodeStoredEvent(stream, quoting))).not.toContain(effectId);
    const finished = everyKind[2] as Extract<LedgerEvent, { type: 'AttemptFinished' }>;
    expect(encodeStoredEvent(stream, finished)).not.toHaveProperty('z');
    for (const reason of ['HTTP 201', 'HTTP 200 ', 'timeout', '']) expect(roundTrip(stream, { ...finished, reason })).toEqual({ ...finished, reason });
    const { httpStatus: _h, ...noStatus } = finished;
    expect(roundTrip(stream, { ...noStatus, reason: 'HTTP 200' })).toEqual({ ...noStatus, reason: 'HTTP 200' });
  });

  it('keeps EffectDeclared.effectId under its own name (the partial index and locateEffect read it)', () => {
    expect(encodeStoredEvent(stream, everyKind[0]!)).toMatchObject({ effectId });
  });

  it('reads rows of the old, verbatim form as they are', () => {
    for (const event of everyKind) {
      const { type, ...old } = event;
      expect(decodeLedgerEvent(type, decodeStoredEvent(stream, type, JSON.parse(JSON.stringify(old))))).toEqual(event);
    }
  });

  it('keeps keys it does not know, even ones that look like its codes, and a v other than 1', () => {
    const future = { ...everyKind[4]!, e: 'x', '~y': 2, z: 3, v: 2 } as unknown as LedgerEvent;
    const stored = JSON.parse(JSON.stringify(encodeStoredEvent(stream, future))) as Record<string, unknown>;
    expect(stored).not.toHaveProperty('v');
    expect(decodeStoredEvent(stream, future.type, stored)).toEqual((({ type: _t, ...rest }) => rest)(future as unknown as Record<string, unknown>));
  });

  it('is smaller than the verbatim event', () => {
    for (const event of everyKind.slice(0, 3)) {
      const { type: _type, ...verbatim } = event;
      expect(JSON.stringify(encodeStoredEvent(stream, event)).length).toBeLessThan(JSON.stringify(verbatim).length * 0.8);
    }
  });
});
