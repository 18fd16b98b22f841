// The nemesis: a schedule drawn from the seed, then played against the fleet (test/fleet/faults.mjs),
// every fault and every heal logged with its time (ms since the run's t0).
export function rng(seed) {
  let s = (seed * 2654435761) >>> 0 || 1;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** Every fault kind, with the kind of host it is aimed at. */
export const FAULTS = {
  'partition-ledger': 'effectd', // eN ↔ pg1 and pg2
  'partition-brokers': 'effectd', // eN ↔ k1, k2, k3
  'partition-provider': 'effectd', // eN ↔ sim
  'isolate-effectd': 'effectd', // eN ↔ every other host
  'partition-broker-minority': 'broker', // kN ↔ every other host (the other brokers included)
  'pause-effectd': 'effectd', // SIGSTOP past the lease
  'kill-effectd': 'effectd', // SIGKILL, restarted after the hold
  'kill-broker': 'broker', // SIGKILL, restarted after the hold
  'kill-controller': 'controller', // SIGKILL of the active KRaft controller (asked in the quiet before the fault)
  'pg-failover': 'pg', // SIGKILL of the primary, promotion of the standby (once per run)
  'slow-link': 'effectd', // Toxiproxy latency on eN's paths to PostgreSQL and the provider
  'broken-link': 'effectd', // Toxiproxy resets and cut streams on the same paths
  'rolling-restart': 'fleet', // e1–e3 one at a time, one with a changed config
};
export const FAULT_KINDS = Object.keys(FAULTS);

/** The kinds a profile cycles through. short: what CI runs (≤ 4 minutes). */
export const PROFILES = {
  full: { kinds: FAULT_KINDS, holdMs: 15_000, gapMs: 8_000 },
  short: { kinds: ['partition-ledger', 'pause-effectd', 'kill-broker', 'pg-failover'], holdMs: 12_000, gapMs: 6_000, rounds: 1 },
};

/** A rolling restart is not held: its slot is how long three restarts may take. */
const SLOT_MS = { 'rolling-restart': 35_000 };

/**
 * The schedule: every kind of the profile once per round (seeded order and targets), each held
 * `holdMs` then healed, `gapMs` of quiet between faults, from `startMs` until `endMs`. pg-failover
 * runs once (there is one standby).
 */
export function schedule(seed, { startMs, endMs, profile = 'full', holdMs, gapMs, effectd = 3, brokers = 3 }) {
  const p = PROFILES[profile];
  if (!p) throw new Error(`unknown nemesis profile ${profile}: use ${Object.keys(PROFILES).join(' or ')}`);
  holdMs ??= p.holdMs;
  gapMs ??= p.gapMs;
  const random = rng(seed);
  const pick = (n) => Math.floor(random() * n);
  const out = [];
  let t = startMs;
  let failedOver = false;
  for (let round = 0; round < (p.rounds ?? Infinity); round++) {
    const kinds = [...p.kinds];
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = pick(i + 1);
      [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
    }
    let placed = 0;
    for (const kind of kinds) {
      const slot = Math.max(holdMs, SLOT_MS[kind] ?? 0);
      if (t + slot > endMs) return out;
      if (kind === 'pg-failover' && failedOver) continue;
      const fault = { kind, at: t, holdMs: slot };
      const aim = FAULTS[kind];
      if (aim === 'effectd') fault.target = `e${pick(effectd) + 1}`;
      if (aim === 'broker') fault.target = `k${pick(brokers) + 1}`;
      if (aim === 'fleet') {
        fault.target = `e1-e${effectd}`;
        fault.changed = `e${pick(effectd) + 1}`;
      }
      if (aim === 'pg') {
        fault.target = 'pg1';
        failedOver = true;
      }
      fault.label = `${[kind, fault.target].filter(Boolean).join(' ')}${fault.changed ? ` (new config on ${fault.changed})` : ''}`;
      out.push(fault);
      placed++;
      t += slot + gapMs;
    }
    if (placed === 0) return out;
  }
  return out;
}
