import { simulatorCall } from '@effectd/simulators';
import type { FaultRule } from '@effectd/simulators';
import { startSimulator, type RunningSimulator } from '@effectd/simulators';
import { sleep } from './bench-http.js';
import { simulatorKind, simulatorOptions } from './bench-config.js';
import type { ProviderKind } from './workloads.js';
import { CodedError } from '../../../src/shared/coded-error.js';

type FaultRuleInput = { match?: Partial<FaultRule['match']>; action: FaultRule['action'] };

/**
 * The simulated providers of one benchmark cell: fresh ones per cell, so ids, keys, clocks and
 * fault counters start from nothing. They run in the benchmark's process, apart from effectd, so
 * killing effectd never touches the ground truth; the benchmark only talks to them over HTTP.
 */
export class CellProviders {
  /** Each provider's rules in book order; `fault` marks the injected faults (not standing refusals). */
  private readonly rules = new Map<ProviderKind, { rule: FaultRuleInput; fault: boolean }[]>();

  private constructor(private readonly sims: Map<ProviderKind, RunningSimulator>) {}

  /**
   * `idSeed` is stamped into every id the providers issue (`ch_<hex>_000001`): one per cell, so a
   * refund or a release names its own cell's records and a straggler of an earlier cell names none.
   * `overrides` are settings of one provider's simulator that replace the ones matching its contract.
   */
  static async start(kinds: readonly ProviderKind[], idSeed: number, retentionMs: number, overrides: Partial<Record<ProviderKind, Record<string, unknown>>> = {}): Promise<CellProviders> {
    const sims = new Map<ProviderKind, RunningSimulator>();
    try {
      for (const kind of kinds) sims.set(kind, await startSimulator(simulatorKind(kind), { seed: idSeed, options: { ...simulatorOptions(kind, retentionMs), ...overrides[kind] } }));
    } catch (error) {
      await Promise.all([...sims.values()].map((s) => s.close()));
      throw error;
    }
    return new CellProviders(sims);
  }

  /** What every id these providers issue contains (see `start`). */
  static idStamp(idSeed: number): string {
    return `_${(idSeed >>> 0).toString(16)}_`;
  }

  get kinds(): ProviderKind[] {
    return [...this.sims.keys()];
  }

  url(kind: ProviderKind): string {
    const sim = this.sims.get(kind);
    if (!sim) throw new CodedError('internal', `no ${kind} provider in this cell`);
    return sim.url;
  }

  /**
   * Adds rules to a provider's fault book: the fault aimed at one request goes `first` (it decides
   * for that request), standing behaviour such as a saga step's refusal goes `last`.
   */
  async armFaults(kind: ProviderKind, rules: FaultRuleInput[], position: 'first' | 'last' = 'last'): Promise<void> {
    const current = this.rules.get(kind) ?? [];
    const added = rules.map((rule) => ({ rule, fault: position === 'first' }));
    const next = position === 'first' ? [...added, ...current] : [...current, ...added];
    this.rules.set(kind, next);
    await simulatorCall(this.url(kind), '/_admin/faults', { rules: next.map((r) => r.rule) });
  }

  /** How many times the injected provider-side faults applied, across providers (standing refusals not counted). */
  async faultsFired(): Promise<number> {
    return this.fired(true);
  }

  /** How many times the standing refusals (a saga step's failAt) applied. */
  async refusalsFired(): Promise<number> {
    return this.fired(false);
  }

  private async fired(faults: boolean): Promise<number> {
    let fired = 0;
    for (const [kind, rules] of this.rules) {
      const { stats } = await simulatorCall<{ stats: { fired: number }[] }>(this.url(kind), '/_admin/faults');
      fired += stats.reduce((sum, s, i) => sum + (rules[i]?.fault === faults ? s.fired : 0), 0);
    }
    return fired;
  }

  /** The provider's own record of what happened: the only ground truth the score uses. */
  async oracle(kind: ProviderKind): Promise<unknown> {
    return this.sims.has(kind) ? simulatorCall(this.url(kind), '/_oracle/state') : undefined;
  }

  async mutationRequests(): Promise<number> {
    let count = 0;
    for (const kind of this.sims.keys()) {
      const { requests } = await simulatorCall<{ requests: { method: string }[] }>(this.url(kind), '/_admin/requests');
      count += requests.filter((r) => r.method === 'POST').length;
    }
    return count;
  }

  /** Waits until no request is held by a fault (a late commit or a delay still to come). */
  async quiesce(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let pending = 0;
      for (const kind of this.sims.keys()) {
        const { requests } = await simulatorCall<{ requests: { status: number | string }[] }>(this.url(kind), '/_admin/requests');
        pending += requests.filter((r) => r.status === 'pending').length;
      }
      if (pending === 0 || Date.now() > deadline) return;
      await sleep(25);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.sims.values()].map((s) => s.close()));
  }
}
