import { describe, expect, it } from 'vitest';
import { LedgerGate } from '../../src/transport/kafka/ledger-gate.js';

/** Issue 30: an instance that cannot write to its ledger stops fetching, then leaves the group, then comes back. */
describe('the Kafka door while the ledger takes no writes (ledger-gate.ts)', () => {
  function gate(awayAfterMs = 10_000) {
    let now = 0;
    let writable = true;
    const moves: string[] = [];
    const g = new LedgerGate(async () => writable, {
      pause: () => moves.push('pause'),
      resume: () => moves.push('resume'),
      leave: async () => { moves.push('leave'); },
      rejoin: async () => { moves.push('rejoin'); },
    }, { awayAfterMs, log: () => {}, now: () => now });
    return { g, moves, at: (ms: number) => (now = ms), set: (w: boolean) => (writable = w) };
  }

  it('a short outage pauses fetching and resumes it, without leaving the group', async () => {
    const { g, moves, at, set } = gate();
    expect(await g.tick()).toBe('open');
    set(false);
    at(1_000);
    expect(await g.tick()).toBe('paused');
    at(10_999);
    expect(await g.tick()).toBe('paused');
    set(true);
    at(11_000);
    expect(await g.tick()).toBe('open');
    expect(moves).toEqual(['pause', 'resume']);
  });

  it('an outage past the bound leaves the group once, and the door joins again when the ledger takes writes', async () => {
    const { g, moves, at, set } = gate();
    set(false);
    at(1_000);
    await g.tick();
    at(11_000);
    expect(await g.tick()).toBe('away');
    at(30_000);
    expect(await g.tick()).toBe('away');
    set(true);
    expect(await g.tick()).toBe('open');
    expect(moves).toEqual(['pause', 'leave', 'rejoin']);
    // A new outage counts from its own start.
    set(false);
    at(40_000);
    await g.tick();
    at(49_999);
    expect(await g.tick()).toBe('paused');
  });

  it('a look that fails counts as unwritable; a failed rejoin is tried again on the next look', async () => {
    let calls = 0;
    const moves: string[] = [];
    let now = 0;
    const g = new LedgerGate(async () => { if (++calls <= 2) throw new Error('probe timed out'); return true; }, {
      pause: () => moves.push('pause'), resume: () => moves.push('resume'), leave: async () => { moves.push('leave'); },
      rejoin: async () => { moves.push('rejoin'); if (moves.filter((m) => m === 'rejoin').length === 1) throw new Error('broker away'); },
    }, { awayAfterMs: 0, log: () => {}, now: () => now });
    expect(await g.tick()).toBe('paused');
    now = 1;
    expect(await g.tick()).toBe('away');
    expect(await g.tick()).toBe('away');
    expect(await g.tick()).toBe('open');
    expect(moves).toEqual(['pause', 'leave', 'rejoin', 'rejoin']);
  });
});
