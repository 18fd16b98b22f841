// The read side takes this instance's own appends as they are made (OpenEffectsProjection.appended),
// and its catch-up must then skip them: whatever the interleaving with other instances' appends and
// with catch-ups, the views equal those of a projection that only ever read the ledger.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
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
});
