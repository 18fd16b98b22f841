// The nemesis: a schedule drawn from the seed, then played against the fleet, every fault and
// every heal logged with its time (ms since the run's t0).
export function rng(seed) {
  let s = (seed * 2654435761) >>> 0 || 1;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

export const FAULT_KINDS = ['partition-ledger', 'pause-effectd', 'kill-broker', 'pg-failover'];

/**
 * The schedule: every fault kind once per round (seeded order and targets), each held `holdMs`
 * then healed, `gapMs` of quiet between faults, from `startMs` until `endMs`. pg-failover runs
 * once (there is one standby).
 */
export function schedule(seed, { startMs, endMs, holdMs = 20_000, gapMs = 12_000, effectd = 3, brokers = 3 }) {
  const random = rng(seed);
  const pick = (n) => Math.floor(random() * n);
  const out = [];
  let t = startMs;
  let failedOver = false;
  while (t + holdMs <= endMs) {
    const kinds = [...FAULT_KINDS];
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = pick(i + 1);
      [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
    }
    for (const kind of kinds) {
      if (t + holdMs > endMs) break;
      if (kind === 'pg-failover' && failedOver) continue;
      const fault = { kind, at: t, holdMs };
      if (kind === 'partition-ledger' || kind === 'pause-effectd') fault.target = `e${pick(effectd) + 1}`;
      if (kind === 'kill-broker') fault.target = `k${pick(brokers) + 1}`;
      if (kind === 'pg-failover') {
        fault.target = 'pg1';
        failedOver = true;
      }
      fault.label = `${kind} ${fault.target}`;
      out.push(fault);
      t += holdMs + gapMs;
    }
  }
  return out;
}
