import { simulatorCall } from '../harness/simulator-process.js';
import type { FaultRule } from '../simulators/faults.js';
import { startSimulator, type RunningSimulator } from '../simulators/server.js';
import { sleep } from './bench-http.js';
import { simulatorOptions } from './bench-config.js';
import type { ProviderKind } from './workloads.js';

type FaultRuleInput = { match?: Partial<FaultRule['match']>; action: FaultRule['action'] };

/**
 * The simulated providers of one benchmark cell: fresh ones per cell, so ids, keys, clocks and
 * fault counters start from nothing. They run in the benchmark's process, apart from effectd, so
 * killing effectd never touches the ground truth; the benchmark only talks to them over HTTP.
 */
export class CellProviders {
  private constructor(private readonly sims: Map<ProviderKind, RunningSimulator>) {}

  static async start(kinds: readonly ProviderKind[], seed: number, retentionMs: number): Promise<CellProviders> {
    const sims = new Map<ProviderKind, RunningSimulator>();
    try {
      for (const kind of kinds) sims.set(kind, await startSimulator(kind, { seed, options: simulatorOptions(kind, retentionMs) }));
    } catch (error) {
      await Promise.all([...sims.values()].map((s) => s.close()));
      throw error;
    }
    return new CellProviders(sims);
  }

  get kinds(): ProviderKind[] {
    return [...this.sims.keys()];
  }

  url(kind: ProviderKind): string {
    const sim = this.sims.get(kind);
    if (!sim) throw new Error(`no ${kind} provider in this cell`);
    return sim.url;
  }

  async armFaults(kind: ProviderKind, rules: FaultRuleInput[]): Promise<void> {
    await simulatorCall(this.url(kind), '/_admin/faults', { rules });
  }

  /** How many times the provider-side fault rules applied, across providers. */
  async faultsFired(): Promise<number> {
    let fired = 0;
    for (const kind of this.sims.keys()) {
      const { stats } = await simulatorCall<{ stats: { fired: number }[] }>(this.url(kind), '/_admin/faults');
      fired += stats.reduce((sum, s) => sum + s.fired, 0);
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
