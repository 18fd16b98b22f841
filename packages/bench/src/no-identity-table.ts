import { EPISODES, type NoIdentityCell } from './no-identity-lane.js';

/** The table of docs/mcp.md: per option, summed over episodes and seeds. */
export function noIdentityTable(cells: readonly NoIdentityCell[]): string {
  const options = [...new Set(cells.map((c) => c.option))];
  const header = ['option', 'intended', 'charged', 'duplicates', 'false dedups', 'refusals', 'missing', 'calls', 'lost replies', ...EPISODES.map((e) => `${e} d/f/r`)];
  const rows = options.map((option) => {
    const mine = cells.filter((c) => c.option === option);
    const sum = (pick: (c: NoIdentityCell) => number, of = mine) => of.reduce((s, c) => s + pick(c), 0);
    const per = EPISODES.map((e) => {
      const ep = mine.filter((c) => c.episode === e);
      return `${sum((c) => c.duplicates, ep)}/${sum((c) => c.falseDedup, ep)}/${sum((c) => c.refusals, ep)}`;
    });
    return [option, String(sum((c) => c.intended)), String(sum((c) => c.charged)), String(sum((c) => c.duplicates)), String(sum((c) => c.falseDedup)), String(sum((c) => c.refusals)), String(sum((c) => c.missing)), String(sum((c) => c.calls)), String(sum((c) => c.lostReplies)), ...per];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cols: string[]) => cols.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
