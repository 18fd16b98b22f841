import type { EffectEvent as LedgerEvent } from '../../src/core/events.js';

/** Small, valid ledger events for tests that exercise storage and folding. */
export function declared(effectId: string, at = 1_000, overrides: Partial<Extract<LedgerEvent, { type: 'EffectDeclared' }>> = {}): LedgerEvent {
  return {
    type: 'EffectDeclared', v: 1, at, effectId, tenant: 't1', workflowId: 'wf-1', step: '1', slot: '0',
    tool: 'payments.charge', contractVersion: 1, intentDigest: 'digest-a', args: { amount: 4900, currency: 'usd' },
    target: 'inv-1', principal: 'agent', ...overrides,
  };
}

export function started(effectId: string, attempt: number, at: number, overrides: Partial<Extract<LedgerEvent, { type: 'AttemptStarted' }>> = {}): LedgerEvent {
  return { type: 'AttemptStarted', v: 1, at, effectId, attempt, instanceId: 'i-1', providerKey: 'efd-key-1', leaseUntil: at + 5_000, keyExpiresAt: at + 86_400_000, ...overrides };
}

export function finished(effectId: string, attempt: number, at: number, outcome: 'committed' | 'failed_before_effect' | 'terminal_failure' | 'unknown', receipt?: string): LedgerEvent {
  return { type: 'AttemptFinished', v: 1, at, effectId, attempt, outcome, replayed: false, reason: 'test', latencyMs: 1, ...(receipt ? { receipt } : {}) };
}
