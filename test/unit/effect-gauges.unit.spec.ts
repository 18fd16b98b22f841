import { describe, expect, it } from 'vitest';
import type { EffectState } from '../../src/core/effect-state.js';
import { effectGauges } from '../../src/metrics/effect-gauges.js';
import { summarizeWorkflows } from '../../src/gateway/views/workflow-summaries.js';

const NOW = 1_000_000;
function effect(id: string, tool: string, status: EffectState['recordedStatus'], extra: Partial<EffectState> = {}, workflowId = 'wf-1'): EffectState {
  return {
    effectId: id, recordedStatus: status, attempts: [], checks: [], lastEventAt: NOW - 1_000, log: [],
    declared: { type: 'EffectDeclared', v: 1, at: NOW - 60_000, effectId: id, tenant: 'default', workflowId, step: id, slot: '0', tool, contractVersion: 1, intentDigest: 'd', args: {}, target: 't', principal: 'agent' },
    ...extra,
  };
}

describe('effect gauges (what /metrics computes from the ledger)', () => {
  const effects = [
    effect('a', 'payments.charge', 'committed'),
    effect('b', 'payments.charge', 'committed'),
    effect('c', 'payments.charge', 'unknown', { unknownSince: NOW - 30_000 }),
    effect('d', 'payments.charge', 'unknown', { unknownSince: NOW - 5_000 }),
    effect('e', 'weak.notify', 'escalated', { unknownSince: NOW - 120_000 }),
    effect('f', 'weak.notify', 'terminal_failure'),
  ];

  it('counts by tool and state, gives explicit zeros for nothing waiting, and the age of the oldest unknown per tool', () => {
    const g = effectGauges(effects, NOW);
    // In the lifecycle table's order of statuses.
    expect(g.byToolAndState.filter((r) => r.count > 0)).toEqual([
      { tool: 'payments.charge', state: 'unknown', count: 2 },
      { tool: 'payments.charge', state: 'committed', count: 2 },
      { tool: 'weak.notify', state: 'escalated', count: 1 },
      { tool: 'weak.notify', state: 'terminal_failure', count: 1 },
    ]);
    // Every state of every tool seen is a series, 0 when empty: "no unknowns" is a 0, not a gap.
    expect(g.byToolAndState).toHaveLength(2 * 8);
    expect(g.byToolAndState).toContainEqual({ tool: 'weak.notify', state: 'unknown', count: 0 });
    expect(g.waitingForHuman).toEqual([
      { tool: 'payments.charge', state: 'escalated', count: 0 },
      { tool: 'payments.charge', state: 'terminal_failure', count: 0 },
      { tool: 'weak.notify', state: 'escalated', count: 1 },
      { tool: 'weak.notify', state: 'terminal_failure', count: 1 },
    ]);
    expect(g.oldestUnknownSeconds).toEqual([{ tool: 'payments.charge', seconds: 30 }, { tool: 'weak.notify', seconds: 120 }]);
  });

  it("a claim whose lease ran out counts as unknown from the lease's end", () => {
    const lapsed = effect('g', 'email.send', 'dispatching', {
      attempts: [{ started: { type: 'AttemptStarted', v: 1, at: NOW - 20_000, effectId: 'g', attempt: 1, instanceId: 'i', providerKey: 'k', leaseUntil: NOW - 10_000, keyExpiresAt: null } }],
    });
    const g = effectGauges([lapsed], NOW);
    expect(g.byToolAndState.filter((r) => r.count > 0)).toEqual([{ tool: 'email.send', state: 'unknown', count: 1 }]);
    expect(g.oldestUnknownSeconds).toEqual([{ tool: 'email.send', seconds: 10 }]);
  });

  it('workflow summaries: grouped per tenant and workflow, most recent first, flagged when an operator is needed', () => {
    const rows = summarizeWorkflows([...effects.slice(0, 2), effect('x', 'weak.notify', 'escalated', { lastEventAt: NOW }, 'wf-2'), effect('y', 'email.send', 'committed', { lastEventAt: NOW - 50 }, 'wf-2')], NOW);
    expect(rows.map((r) => r.workflowId)).toEqual(['wf-2', 'wf-1']);
    expect(rows[0]).toMatchObject({ tenant: 'default', effects: 2, states: { escalated: 1, committed: 1 }, tools: ['email.send', 'weak.notify'], needsOperator: true, open: false, lastEventAt: new Date(NOW).toISOString() });
    expect(rows[1]).toMatchObject({ effects: 2, states: { committed: 2 }, needsOperator: false });
  });
});
