import { describe, expect, it } from 'vitest';
import { PartitionPipeline } from '../../src/transport/kafka/partition-pipeline.js';

/** A command whose completion the test decides: `finish(true|false)`, or `fail(error)`. */
function gate() {
  let finish!: (ok: boolean) => void;
  let fail!: (error: unknown) => void;
  const done = new Promise<boolean>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const state = { started: false };
  return { state, finish, fail, run: () => ((state.started = true), done) };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function pipeline() {
  const commits: string[] = [];
  const threw: string[] = [];
  const p = new PartitionPipeline({ committable: (o) => commits.push(o), threw: (o) => threw.push(o) });
  return { p, commits, threw };
}

describe('PartitionPipeline: commands of one partition across batches', () => {
  it('runs different keys at once and one key strictly in offset order', async () => {
    const { p } = pipeline();
    const a1 = gate(), b1 = gate(), a2 = gate();
    p.admit('0', 'a', a1.run);
    p.admit('1', 'b', b1.run);
    p.admit('2', 'a', a2.run);
    await tick();
    expect([a1.state.started, b1.state.started, a2.state.started]).toEqual([true, true, false]);
    a1.finish(true);
    await tick();
    expect(a2.state.started).toBe(true);
  });

  it('commits only the contiguous prefix of completed commands (the offset after it)', async () => {
    const { p, commits } = pipeline();
    const c0 = gate(), c1 = gate(), c2 = gate();
    p.admit('10', 'a', c0.run);
    p.admit('11', 'b', c1.run);
    p.admit('12', 'c', c2.run);
    c1.finish(true);
    c2.finish(true);
    await tick();
    expect(commits).toEqual([]); // 10 still running: nothing after it may be committed
    c0.finish(true);
    await tick();
    expect(commits).toEqual(['13']);
  });

  it('a command that does not complete stops its key (nothing later of it runs) and holds the commit point', async () => {
    const { p, commits, threw } = pipeline();
    const a1 = gate(), a2 = gate(), b1 = gate();
    p.admit('0', 'a', a1.run);
    p.admit('1', 'a', a2.run);
    p.admit('2', 'b', b1.run);
    a1.fail(new Error('defect'));
    b1.finish(true);
    await tick();
    await tick();
    expect(threw).toEqual(['0']);
    expect(a2.state.started).toBe(false);
    expect(commits).toEqual([]);
    await p.idle();
    expect(p.inFlight).toBe(0);
  });

  it('nextEpoch answers the first offset not completed and forgets the rest; old completions commit nothing', async () => {
    const { p, commits } = pipeline();
    const c0 = gate(), c1 = gate(), c2 = gate();
    p.admit('5', 'a', c0.run);
    p.admit('6', 'b', c1.run);
    p.admit('7', 'b', c2.run);
    c0.finish(true);
    await tick();
    expect(commits).toEqual(['6']);
    expect(p.nextEpoch()).toBe('6');
    c1.finish(true);
    await tick();
    await tick();
    expect(c2.state.started).toBe(false); // queued in the old epoch: it is redelivered instead
    expect(commits).toEqual(['6']);
    expect(p.nextEpoch()).toBeUndefined();
  });

  it('a redelivered command waits behind the copy of its key still running from the old epoch', async () => {
    const { p, commits } = pipeline();
    const old = gate(), again = gate();
    p.admit('3', 'a', old.run);
    await tick();
    p.nextEpoch();
    p.admit('3', 'a', again.run);
    await tick();
    expect(again.state.started).toBe(false);
    old.finish(true);
    await tick();
    expect(again.state.started).toBe(true);
    again.finish(true);
    await p.idle();
    expect(commits).toEqual(['4']);
  });
});
