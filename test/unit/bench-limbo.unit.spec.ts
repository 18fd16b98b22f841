// LIMBO's measures (`effectd bench --limbo`): what a cell scores from the providers' oracles and the
// system's last word, the heavy tail's draw, a batch fault's per-item rule, and the lane's case list.
import { describe, expect, it } from 'vitest';
import { FaultBook } from '../../packages/simulators/src/faults.js';
import { faultSpec } from '../../packages/bench/src/fault-registry.js';
import { faultApplies } from '../../packages/bench/src/faults.js';
import { collateralWrites } from '../../packages/bench/src/limbo/collateral.js';
import { LIMBO_CASES, LIMBO_QUICK_CASES } from '../../packages/bench/src/limbo/limbo-cases.js';
import { limboMeasures, limboTotals } from '../../packages/bench/src/limbo/limbo-measures.js';
import { LIMBO_FAULTS } from '../../packages/bench/src/limbo/limbo-names.js';
import { logUniformMs } from '../../packages/bench/src/limbo/sim-time.js';
import type { IntentEvidence } from '../../packages/bench/src/scoring.js';
import { workload } from '../../packages/bench/src/workloads.js';

const intent = (id: string, identity: string, final: IntentEvidence['final']): IntentEvidence => ({ intentId: id, identity, multiplicity: 1, repeat: false, final });

describe('LIMBO measures of one cell', () => {
  it('a charge done twice: the goal is reached, not exactly once; one duplicate, and its `done` is an overclaim', () => {
    expect(limboMeasures([intent('charge', 'c', 'done')], () => 2, 0)).toEqual({ taskSuccess: true, exactlyOnce: false, duplicates: 1, collateral: 0, overclaim: 1 });
  });

  it('done once, exactly: success both ways, nothing to report', () => {
    expect(limboMeasures([intent('charge', 'c', 'done'), intent('email', 'e', 'done')], () => 1, 0)).toEqual({ taskSuccess: true, exactlyOnce: true, duplicates: 0, collateral: 0, overclaim: 0 });
  });

  it('an honest `unknown` beside a blocked step: the task failed, and nothing was overclaimed', () => {
    const m = limboMeasures([intent('notify', 'n', 'escalated'), intent('email', 'e', 'blocked')], (identity) => (identity === 'n' ? 1 : 0), 0);
    expect(m).toEqual({ taskSuccess: false, exactlyOnce: false, duplicates: 0, collateral: 0, overclaim: 0 });
  });

  it('`done` for an effect the provider does not hold is an overclaim; a collateral write spoils exactly-once only', () => {
    expect(limboMeasures([intent('email', 'e', 'done')], () => 0, 0).overclaim).toBe(1);
    expect(limboMeasures([intent('email', 'e', 'done')], () => 1, 1)).toEqual({ taskSuccess: true, exactlyOnce: false, duplicates: 0, collateral: 1, overclaim: 0 });
  });

  it('a declared repeat counts its two records as intended, not as a duplicate', () => {
    expect(limboMeasures([intent('r1', 'r', 'done'), intent('r2', 'r', 'done')], () => 2, 0)).toMatchObject({ exactlyOnce: true, duplicates: 0, overclaim: 0 });
  });

  it('totals count successful cells and add the rest up', () => {
    const a = limboMeasures([intent('c', 'c', 'done')], () => 2, 0);
    const b = limboMeasures([intent('c', 'c', 'done')], () => 1, 0);
    expect(limboTotals([a, b])).toEqual({ cells: 2, taskSuccess: 2, exactlyOnce: 1, duplicates: 1, collateral: 0, overclaim: 1 });
  });
});

describe('collateral writes', () => {
  it('an email to an address no intent names is collateral; the intended one is not', () => {
    const oracles = { email: { emails: [
      { id: 'em_1', to: ['billing.x@example.com'], headers: { 'X-Template': 'invoice' } },
      { id: 'em_2', to: ['billing.x@exmaple.com'], headers: { 'X-Template': 'invoice' } },
    ] } };
    expect(collateralWrites(oracles, [{ kind: 'email', to: 'billing.x@example.com', template: 'invoice' }])).toBe(1);
    expect(collateralWrites(oracles, [{ kind: 'email', to: 'billing.x@example.com', template: 'invoice' }, { kind: 'email', to: 'billing.x@exmaple.com', template: 'invoice' }])).toBe(0);
  });
});

describe('the heavy-tailed late commit', () => {
  it('is drawn log-uniformly between 40 s and 2 h: the bounds at 0 and 1, their geometric mean at 0.5', () => {
    expect(logUniformMs(0, 40_000, 7_200_000)).toBe(40_000);
    expect(logUniformMs(1, 40_000, 7_200_000)).toBe(7_200_000);
    expect(logUniformMs(0.5, 40_000, 7_200_000)).toBe(Math.round(Math.sqrt(40_000 * 7_200_000)));
  });
});

describe('a batch fault hits one item by its body', () => {
  it('bodyIncludes matches one recipient (case-insensitively) and fires once', () => {
    const book = new FaultBook();
    book.replace([{ match: { method: 'POST', pathPrefix: '/emails', bodyIncludes: 'guest2.t@example.com', times: 1 }, action: { type: 'drop-after-mutation' } }]);
    expect(book.pick('POST', '/emails', '{"to":["guest1.t@example.com"]}')).toBeUndefined();
    expect(book.pick('POST', '/emails', '{"to":["GUEST2.T@EXAMPLE.COM"]}')).toEqual({ type: 'drop-after-mutation' });
    expect(book.pick('POST', '/emails', '{"to":["guest2.t@example.com"]}')).toBeUndefined();
  });
});

describe('the LIMBO lane\'s cases', () => {
  it('runs every one of LIMBO\'s fault modes and the six named cases, each on a workload its fault can reach', () => {
    const modes = LIMBO_CASES.filter((c) => c.kind === 'fault mode').map((c) => c.fault);
    expect(LIMBO_FAULTS.filter((f) => f !== 'payload-drift').every((f) => modes.includes(f))).toBe(true);
    expect(LIMBO_CASES.filter((c) => c.kind === 'case').map((c) => c.name)).toEqual(['new-attempt-identity', 'lost-ack-reconcile', 'truth-unavailable-blocks', 'eventual-consistency', 'redelivery-replay', 'payload-drift-reject']);
    for (const c of LIMBO_CASES) expect(faultApplies(faultSpec(c.fault), workload(c.workload)!), `${c.name}: ${c.fault} on ${c.workload}`).toBe(true);
    // A case is one (workload, fault) pair: a cell's workload and fault name its case.
    expect(new Set(LIMBO_CASES.map((c) => `${c.workload}/${c.fault}`)).size).toBe(LIMBO_CASES.length);
    expect(LIMBO_QUICK_CASES.every((name) => LIMBO_CASES.some((c) => c.name === name))).toBe(true);
  });
});
