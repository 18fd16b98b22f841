// The AI SDK crash lab (packages/bench/src/labs/ai-sdk-lab.ts, `npm run lab:ai-sdk`) as it prints: a
// real AI SDK agent process SIGKILLed in its charging tool call at three points, resumed from its
// persisted messages, once calling the provider directly and once through effectd; counted from
// the payments simulator's records. Through effectd: one charge at every point.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LabRow } from '../../packages/bench/src/labs/ai-sdk-lab.js';
import { ensureBuilt } from '../support/effectd-harness.js';

const LAB = 'packages/bench/dist/packages/bench/src/labs/ai-sdk-lab.js';

describe('the AI SDK crash lab', () => {
  let printed: string[];
  let rows: LabRow[];

  beforeAll(async () => {
    await ensureBuilt();
    const { stdout } = await promisify(execFile)(process.execPath, [LAB, '--json'], { timeout: 150_000 });
    printed = stdout.trim().split('\n');
    rows = (JSON.parse(printed.at(-1)!) as { rows: LabRow[] }).rows;
  }, 180_000);

  it('through effectd, the provider made one charge at every crash point; directly, two wherever the provider had committed', () => {
    expect(rows.map((r) => [r.point, r.withoutEffectd, r.withEffectd])).toEqual([
      ['before', 1, 1],
      ['in-flight', 2, 1],
      ['after', 2, 1],
    ]);
    // The resumed agent's tool answered from effectd's ledger: the charge is done (or being checked), never not_done.
    for (const row of rows) expect(['done', 'unknown']).toContain(row.resumedWithEffectd);
  });

  it('prints the numbers, one line per crash point and the total', () => {
    expect(printed).toContain('AI SDK: 5 charges without effectd, 3 with (3 crashed runs, 1 charge asked for in each)');
    expect(printed.filter((line) => /^AI SDK, killed .*: \d+ charges? without effectd, 1 with/.test(line))).toHaveLength(3);
  });
});
