import { beforeAll, describe, expect, it } from 'vitest';
import { EPISODES, runNoIdentityLane, type NoIdentityCell } from '../../packages/bench/src/no-identity-lane.js';
import { noIdentityTable } from '../../packages/bench/src/no-identity-table.js';
import { NO_IDENTITY_OPTIONS } from '../../packages/bench/src/no-identity-options.js';
import { ensureBuilt } from '../support/effectd-harness.js';

/**
 * The MCP no-identity lane (`effectd bench --lane mcp-no-identity`), one seed: what docs/mcp.md's
 * table and the default chosen from it rest on. Each option's verdict is asserted, and that each
 * episode's lost reply reached the client (else the cell proves nothing).
 */
describe('effectd bench --lane mcp-no-identity (1 seed)', () => {
  let cells: NoIdentityCell[];
  const of = (option: string) => cells.filter((c) => c.option === option);
  const sum = (list: NoIdentityCell[], pick: (c: NoIdentityCell) => number) => list.reduce((s, c) => s + pick(c), 0);

  beforeAll(async () => {
    await ensureBuilt();
    cells = await runNoIdentityLane({ seeds: [1] });
  }, 180_000);

  it('runs every option × episode, none broken', () => {
    expect(cells).toHaveLength(NO_IDENTITY_OPTIONS.length * EPISODES.length);
    expect(cells.filter((c) => c.error !== undefined)).toEqual([]);
    expect(noIdentityTable(cells)).toMatch(/^option\s+intended\s+charged\s+duplicates\s+false dedups\s+refusals/);
  });

  it('the faults reached the client: every lost-reply episode met a lost reply where a call was taken', () => {
    for (const option of ['content', 'content+repeat-arg', 'harness-meta', 'arg-every-call']) {
      for (const episode of ['lost-reply', 'timeout', 'redecide'] as const) {
        expect(of(option).find((c) => c.episode === episode)!.lostReplies, `${option} × ${episode}`).toBeGreaterThan(0);
      }
    }
  });

  it('refuse: every call refused, nothing charged', () => {
    expect(sum(of('refuse'), (c) => c.refusals)).toBe(sum(of('refuse'), (c) => c.intended));
    expect(sum(of('refuse'), (c) => c.charged)).toBe(0);
  });

  it('the default (content, the model filling effectd_repeat for a deliberate repeat) is the harness path: no duplicate, no false dedup, no refusal', () => {
    for (const option of ['content+repeat-arg', 'harness-meta']) {
      expect({ option, duplicates: sum(of(option), (c) => c.duplicates), falseDedup: sum(of(option), (c) => c.falseDedup), refusals: sum(of(option), (c) => c.refusals), missing: sum(of(option), (c) => c.missing) })
        .toEqual({ option, duplicates: 0, falseDedup: 0, refusals: 0, missing: 0 });
    }
  });

  it('content without effectd_repeat: no duplicate, and each undeclared deliberate repeat is a false dedup', () => {
    expect(sum(of('content'), (c) => c.duplicates)).toBe(0);
    expect(of('content').filter((c) => c.falseDedup > 0).map((c) => c.episode).sort()).toEqual(['repeat', 'repeat-lost-reply']);
  });

  it('an identity the model fills on every decision duplicates when it decides again after a lost reply', () => {
    expect(of('arg-every-call').find((c) => c.episode === 'redecide')!.duplicates).toBe(1);
  });
});
