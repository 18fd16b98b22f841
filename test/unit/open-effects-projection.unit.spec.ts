// The read side takes this instance's own appends as they are made (OpenEffectsProjection.appended),
// and its catch-up must then skip them: whatever the interleaving with other instances' appends and
// with catch-ups, the views equal those of a projection that only ever read the ledger.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
import { emptyWorkflow, foldWorkflow, type WorkflowState } from '../../src/core/fold.js';
import { NO_STREAM } from '../../src/ledger/ledger.port.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { OpenEffectsProjection } from '../../src/runtime/open-effects-projection.js';
import { declared, finished, started } from '../support/events.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup() {
  const ledger = new SqliteLedger(':memory:');
  const dir = mkdtempSync(join(tmpdir(), 'projection-'));
  dirs.push(dir);
  const snapshot = join(dir, 'open-effects.json');
  const mine = new OpenEffectsProjection(ledger, 'ledger-1', snapshot);
  /** This instance's append: to the ledger, then told to its projection (as the workflow store does). */
  const appendMine = async (stream: string, events: LedgerEvent[], expected: number) => {
    await ledger.append(stream, events, expected);
    mine.appended(stream, expected + 1, events);
  };
  /** What a projection that only reads the ledger holds. */
  const truth = async () => {
    const reader = new OpenEffectsProjection(ledger, 'ledger-1');
    await reader.catchUp();
    return views(reader);
  };
  return { ledger, mine, snapshot, appendMine, truth };
}

const views = (p: OpenEffectsProjection) => ({ open: p.list(), settled: p.settledCounts(), recent: [...p.recent()] });

describe('open-effects projection: own appends applied as they are made', () => {
  it('holds an own append at once, and the catch-up does not apply it again', async () => {
    const { mine, appendMine, truth } = setup();
    await appendMine('wf-a', [declared('e1'), started('e1', 1, 1_100)], NO_STREAM);
    expect(mine.get('e1')?.state.recordedStatus).toBe('dispatching');
    await appendMine('wf-a', [finished('e1', 1, 1_200, 'committed', 'ch_1')], 1);
    expect(mine.settledCounts()).toEqual([{ tool: 'payments.charge', state: 'committed', count: 1 }]);
    await mine.catchUp();
    expect(views(mine)).toEqual(await truth());
    expect(mine.settledCounts()[0]!.count).toBe(1);
  });

  it('leaves an own append to the catch-up when another instance appended to the stream in between (a stream applies in its order)', async () => {
    const { ledger, mine, appendMine, truth } = setup();
    await appendMine('wf-b', [declared('e2'), started('e2', 1, 1_100)], NO_STREAM);
    await ledger.append('wf-b', [finished('e2', 1, 1_200, 'unknown')], 1); // another instance
    await appendMine('wf-b', [started('e2', 2, 1_300)], 2);
    expect(mine.get('e2')?.state.attempts).toHaveLength(1); // neither the foreign outcome nor this attempt yet
    await mine.catchUp();
    expect(views(mine)).toEqual(await truth());
    expect(mine.get('e2')?.state.attempts).toHaveLength(2);
  });

  it('ignores an own append the catch-up already read (it raced ahead of the append\'s answer)', async () => {
    const { ledger, mine, truth } = setup();
    const events = [declared('e3'), started('e3', 1, 1_100), finished('e3', 1, 1_200, 'committed', 'ch_3')];
    await ledger.append('wf-c', events, NO_STREAM);
    await mine.catchUp();
    mine.appended('wf-c', 0, events);
    expect(views(mine)).toEqual(await truth());
    expect(mine.settledCounts()[0]!.count).toBe(1);
  });

  it('keeps what it applied ahead in its snapshot: a restart does not apply it twice', async () => {
    const { ledger, mine, snapshot, appendMine, truth } = setup();
    await appendMine('wf-d', [declared('e4'), started('e4', 1, 1_100)], NO_STREAM);
    await mine.catchUp();
    await appendMine('wf-d', [finished('e4', 1, 1_200, 'committed', 'ch_4')], 1); // ahead of the catch-up
    await appendMine('wf-e', [declared('e5')], NO_STREAM);
    mine.save();
    const restarted = new OpenEffectsProjection(ledger, 'ledger-1', snapshot);
    expect(restarted.load()).toBe(1);
    await restarted.catchUp();
    const { open, settled } = await truth(); // (the snapshot does not keep the recent list)
    expect({ open: restarted.list(), settled: restarted.settledCounts() }).toEqual({ open, settled });
    expect(restarted.settledCounts()[0]!.count).toBe(1);
  });

  it('takes the effects\' states from the appender\'s fold (the workflow store\'s `after`): the same views as folding each event itself', async () => {
    const { ledger, mine, truth } = setup();
    const states = new Map<string, WorkflowState>();
    /** As the workflow store tells it: the events and the stream's state after them. */
    const appendFolded = async (stream: string, events: LedgerEvent[]) => {
      const before = states.get(stream) ?? emptyWorkflow;
      const after = foldWorkflow(events, before);
      await ledger.append(stream, events, before.revision);
      states.set(stream, after);
      mine.appended(stream, before.revision + 1, events, after);
    };
    // Several events of one effect in one append (only its last one takes the folded state), two
    // effects interleaved, a settle through a resend (open until audited), a lost reply.
    await appendFolded('wf-f', [declared('e6'), started('e6', 1, 1_100), declared('e7', 1_150, { step: '2' }), finished('e6', 1, 1_200, 'committed', 'ch_6')]);
    await appendFolded('wf-f', [started('e7', 1, 1_300), finished('e7', 1, 1_400, 'unknown')]);
    await appendFolded('wf-f', [started('e7', 2, 1_500), finished('e7', 2, 1_600, 'committed', 'ch_7')]);
    await appendFolded('wf-g', [declared('e8', 1_700, { workflowId: 'wf-g' }), started('e8', 1, 1_800)]);
    expect(mine.get('e6')?.state).toEqual(states.get('wf-f')!.effects.get('e6'));
    expect(mine.get('e7')?.state.recordedStatus).toBe('committed');
    expect(mine.list().map((e) => e.state.effectId).sort()).toEqual(['e7', 'e8']); // e7 waits for its duplicate audit
    expect(views(mine)).toEqual(await truth());
    await mine.catchUp();
    expect(views(mine)).toEqual(await truth());
    expect(mine.settledCounts()).toEqual([{ tool: 'payments.charge', state: 'committed', count: 1 }]);
  });

  it('keeps no content index without a tenant content window, and says so when asked for one', async () => {
    const ledger = new SqliteLedger(':memory:');
    const withIndex = new OpenEffectsProjection(ledger, 'ledger-1');
    const without = new OpenEffectsProjection(ledger, 'ledger-1', undefined, undefined, false);
    await ledger.append('wf-h', [declared('e9', 1_000, { contentKey: 'content-9' })], NO_STREAM);
    await Promise.all([withIndex.catchUp(), without.catchUp()]);
    expect(withIndex.withContent('t1', 'content-9').map((e) => e.effectId)).toEqual(['e9']);
    expect(views(without)).toEqual(views(withIndex));
    expect(() => without.withContent('t1', 'content-9')).toThrow(/no content index/);
  });
});
