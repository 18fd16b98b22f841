import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ES module of the fleet harness, no types
import { FAULT_KINDS, FAULTS, PROFILES, schedule } from '../fleet/nemesis.mjs';

type Fault = { kind: string; at: number; holdMs: number; target: string; label: string; changed?: string };
const plan = (seed: number, profile: string, endMs: number): Fault[] => schedule(seed, { startMs: 0, endMs, profile });

describe('the nemesis schedule', () => {
  it('names every fault kind of issue 30, each aimed at a kind of host', () => {
    expect(FAULT_KINDS).toEqual(expect.arrayContaining([
      'partition-ledger', 'partition-brokers', 'partition-provider', 'partition-broker-minority', 'isolate-effectd',
      'pause-effectd', 'kill-effectd', 'kill-broker', 'kill-controller', 'pg-failover', 'slow-link', 'broken-link', 'rolling-restart',
    ]));
    expect(FAULT_KINDS).toHaveLength(13);
    expect(PROFILES.full.kinds).toEqual(FAULT_KINDS);
  });

  it('plays every kind once in a full round, in an order and on targets drawn from the seed', () => {
    for (const seed of [1, 5, 42]) {
      const round = plan(seed, 'full', 600_000).slice(0, FAULT_KINDS.length);
      expect(round.map((f) => f.kind).sort()).toEqual([...FAULT_KINDS].sort());
      for (const f of round) {
        const aim = FAULTS[f.kind];
        if (aim === 'effectd') expect(f.target).toMatch(/^e[1-3]$/);
        if (aim === 'broker') expect(f.target).toMatch(/^k[1-3]$/);
        if (f.kind === 'rolling-restart') expect(f.changed).toMatch(/^e[1-3]$/);
      }
      for (let i = 1; i < round.length; i++) expect(round[i]!.at).toBeGreaterThanOrEqual(round[i - 1]!.at + round[i - 1]!.holdMs);
    }
    expect(plan(1, 'full', 340_000).map((f) => f.label)).not.toEqual(plan(5, 'full', 340_000).map((f) => f.label));
    // the default 7 minutes (faults from 15 s until 355 s) hold one full round
    expect(schedule(5, { startMs: 15_000, endMs: 355_000, profile: 'full' }).slice(0, FAULT_KINDS.length).map((f: Fault) => f.kind).sort()).toEqual([...FAULT_KINDS].sort());
  });

  it('is the same schedule for the same seed, another for another seed', () => {
    for (const profile of ['full', 'short']) {
      expect(plan(7, profile, 1_000_000)).toEqual(plan(7, profile, 1_000_000));
      expect(plan(7, profile, 1_000_000)).not.toEqual(plan(8, profile, 1_000_000));
    }
  });

  it('fails PostgreSQL over once per run, however many rounds', () => {
    const long = plan(3, 'full', 1_800_000);
    expect(long.length).toBeGreaterThan(3 * FAULT_KINDS.length);
    expect(long.filter((f) => f.kind === 'pg-failover')).toHaveLength(1);
    expect(long.at(-1)!.at + long.at(-1)!.holdMs).toBeLessThanOrEqual(1_800_000);
  });

  it('short (CI): one ledger partition, one SIGSTOP past the 3 s lease, one broker kill, one promotion, within 90 s', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const short = plan(seed, 'short', 90_000);
      expect(short.map((f) => f.kind).sort()).toEqual(['kill-broker', 'partition-ledger', 'pause-effectd', 'pg-failover']);
      expect(short.find((f) => f.kind === 'pause-effectd')!.holdMs).toBeGreaterThan(3_000 * 2);
      expect(short.at(-1)!.at + short.at(-1)!.holdMs).toBeLessThanOrEqual(90_000);
    }
  });

  it('refuses a profile it does not have', () => {
    expect(() => plan(1, 'medium', 100_000)).toThrow(/unknown nemesis profile medium/);
  });
});
