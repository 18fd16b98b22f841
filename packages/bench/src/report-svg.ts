import type { CellResult } from './cell-runner.js';
import { ALL_POLICIES, FAULTS, type BenchPolicy, type FaultName } from './names.js';

const COLORS: Record<BenchPolicy, string> = { blind: '#d62728', 'sdk-retry': '#ff7f0e', 'native-or-never': '#9467bd', effectd: '#2ca02c', 'effectd+redecide': '#17becf', 'effectd-mcp': '#1f77b4', 'mcp-direct': '#8c564b' };
const PANELS = [
  { key: 'duplicates', title: 'Duplicates: provider-side effects beyond the allowed multiplicity (effectd\'s detected ones: in the tooltip and the totals)' },
  { key: 'missing', title: 'Missing: intended effects absent, and the system did not say it was unsure' },
  { key: 'unresolved', title: 'Unresolved: honestly reported unknown / escalated at the deadline (not a failure)' },
] as const;

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A plain SVG chart: for each fault, one bar per policy, in three panels (duplicates, missing,
 * unresolved), summed over workloads and averaged over seeds. Opens in any browser.
 */
export function renderSvg(cells: readonly CellResult[], subtitle: string): string {
  const faults = FAULTS.filter((f) => cells.some((c) => c.fault === f));
  const policies = ALL_POLICIES.filter((p) => cells.some((c) => c.policy === p));
  const seeds = Math.max(1, new Set(cells.map((c) => c.seed)).size);
  const value = (fault: FaultName, policy: BenchPolicy, key: (typeof PANELS)[number]['key'] | 'detectedDuplicates') =>
    cells.filter((c) => c.fault === fault && c.policy === policy).reduce((s, c) => s + c[key], 0) / seeds;
  /** A duplicates bar's tooltip: effectd's detected duplicates beside them, when it detected any (`1 (1 detected)`). */
  const label = (fault: FaultName, policy: BenchPolicy, key: (typeof PANELS)[number]['key'], v: number) => {
    const detected = key === 'duplicates' ? value(fault, policy, 'detectedDuplicates') : 0;
    return detected > 0 ? `${round(v)} (${round(detected)} detected)` : round(v);
  };

  const barW = 12;
  const groupW = policies.length * barW + 18;
  const left = 48;
  const width = left + faults.length * groupW + 20;
  const panelH = 170;
  const top = 70;
  const height = top + PANELS.length * (panelH + 70) + 30 + policies.length * 16;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  out.push(`<text x="${left}" y="22" font-size="16" font-weight="bold">effectd bench: what each policy leaves in the world, per fault</text>`);
  out.push(`<text x="${left}" y="40" fill="#555">${escape(subtitle)}</text>`);
  policies.forEach((p, i) => {
    const x = left + i * 150;
    out.push(`<rect x="${x}" y="50" width="12" height="12" fill="${COLORS[p]}"/><text x="${x + 16}" y="60">${escape(p)}</text>`);
  });
  PANELS.forEach((panel, index) => {
    const y0 = top + index * (panelH + 70) + 20;
    const max = Math.max(1, ...faults.flatMap((f) => policies.map((p) => value(f, p, panel.key))));
    const scale = (panelH - 10) / max;
    const empty = faults.every((f) => policies.every((p) => value(f, p, panel.key) === 0));
    out.push(`<text x="${left}" y="${y0 - 6}" font-weight="bold">${escape(panel.title)}${empty ? ' — none in this run' : ''}</text>`);
    const ticks = niceTicks(max);
    for (const t of ticks) {
      const y = y0 + panelH - t * scale;
      out.push(`<line x1="${left}" x2="${width - 20}" y1="${y}" y2="${y}" stroke="#e5e5e5"/><text x="${left - 6}" y="${y + 4}" text-anchor="end" fill="#555">${t}</text>`);
    }
    out.push(`<line x1="${left}" x2="${width - 20}" y1="${y0 + panelH}" y2="${y0 + panelH}" stroke="#333"/>`);
    faults.forEach((fault, g) => {
      const gx = left + g * groupW + 9;
      policies.forEach((policy, i) => {
        const v = value(fault, policy, panel.key);
        const h = v * scale;
        const x = gx + i * barW;
        out.push(`<rect x="${x}" y="${y0 + panelH - h}" width="${barW - 2}" height="${h}" fill="${COLORS[policy]}"><title>${escape(`${fault} × ${policy}: ${panel.key} ${label(fault, policy, panel.key, v)}`)}</title></rect>`);
        if (v > 0) out.push(`<text x="${x + (barW - 2) / 2}" y="${y0 + panelH - h - 2}" text-anchor="middle" font-size="8">${round(v)}</text>`);
      });
      out.push(`<text transform="translate(${gx + (policies.length * barW) / 2},${y0 + panelH + 10}) rotate(30)" font-size="10">${escape(fault)}</text>`);
    });
  });
  const footer = top + PANELS.length * (panelH + 70) + 16;
  out.push(`<text x="${left}" y="${footer}" font-weight="bold">Totals${seeds > 1 ? ' (mean per seed)' : ''}</text>`);
  policies.forEach((policy, i) => {
    const total = (key: (typeof PANELS)[number]['key'] | 'detectedDuplicates') => round(faults.reduce((s, f) => s + value(f, policy, key), 0));
    const detected = total('detectedDuplicates') === '0' ? '' : ` (${total('detectedDuplicates')} detected by effectd and queued for an operator)`;
    out.push(`<rect x="${left}" y="${footer + 7 + i * 16}" width="10" height="10" fill="${COLORS[policy]}"/><text x="${left + 16}" y="${footer + 16 + i * 16}">${escape(`${policy}: ${total('duplicates')} duplicates${detected}, ${total('missing')} missing, ${total('unresolved')} unresolved`)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function round(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

function niceTicks(max: number): number[] {
  const step = max <= 5 ? 1 : max <= 10 ? 2 : max <= 25 ? 5 : Math.ceil(max / 50) * 10;
  const ticks: number[] = [];
  for (let t = 0; t <= max; t += step) ticks.push(t);
  return ticks;
}
