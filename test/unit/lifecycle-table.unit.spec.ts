import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EFFECT_STATUSES, lifecycleTable, type LifecycleRow } from '../../src/core/effect-lifecycle.js';

/**
 * docs/architecture.md's lifecycle table is generated from src/core/effect-lifecycle.ts: this test
 * fails when the two differ. Regenerate with `npm run docs:lifecycle`.
 */
const DOC = 'docs/architecture.md';
const BEGIN = '<!-- lifecycle-table:begin (generated from src/core/effect-lifecycle.ts by `npm run docs:lifecycle`; do not edit) -->';
const END = '<!-- lifecycle-table:end -->';

const yes = (flag: boolean) => (flag ? 'yes' : '–');
const HUMAN: Record<LifecycleRow['human'], string> = { no: '–', yes: 'yes', 'when-no-lookup-left': 'when no lookup is left' };

export function lifecycleMarkdown(): string {
  const header = '| status | meaning | open | settled | in progress | holds content | holds target | unknown clock | needs a human | resolvable | releasable | agent told | saga | events accepted |';
  const rule = `|${' --- |'.repeat(14)}`;
  const rows = lifecycleTable().map(({ status, row }) =>
    `| \`${status}\` | ${row.meaning} | ${yes(row.open)} | ${yes(row.settled)} | ${yes(row.inProgress)} | ${yes(row.holdsContent)} | ${yes(row.holdsTarget)} | ${yes(row.unknownClock)} | ${HUMAN[row.human]} | ${yes(row.resolvable)} | ${yes(row.releasable)} | ${row.agent} | ${row.saga} | ${row.events.map((e) => `\`${e}\``).join(', ') || '–'} |`);
  return [BEGIN, header, rule, ...rows, END].join('\n');
}

describe('the lifecycle table in docs/architecture.md', () => {
  it('is the one in the code (regenerate with npm run docs:lifecycle)', () => {
    const doc = readFileSync(DOC, 'utf8');
    const begin = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    expect(begin, `${DOC} has no generated lifecycle table (markers missing)`).toBeGreaterThanOrEqual(0);
    const current = doc.slice(begin, end + END.length);
    if (process.env.UPDATE_DOCS === '1' && current !== lifecycleMarkdown()) writeFileSync(DOC, doc.replace(current, lifecycleMarkdown()));
    else expect(current).toBe(lifecycleMarkdown());
  });

  it('has a row for every status, in the order of EFFECT_STATUSES', () => {
    expect(lifecycleTable().map((r) => r.status)).toEqual([...EFFECT_STATUSES]);
  });
});
