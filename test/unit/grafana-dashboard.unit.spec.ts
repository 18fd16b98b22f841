import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRIC } from '../../src/metrics/metric-names.js';
import { PromMetrics } from '../../src/metrics/prom-metrics.js';

interface Target { expr?: string; datasource?: { uid?: string } }
interface Panel { id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; datasource?: { uid?: string }; targets?: Target[]; panels?: Panel[] }

const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/effectd.json', 'utf8')) as { uid: string; panels: Panel[] };
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const queried = panels.filter((p) => p.type !== 'row');

/** Every series name effectd exposes: METRIC's names, histograms with their _bucket/_sum/_count. */
async function exportedSeries(): Promise<Set<string>> {
  const registered = await new PromMetrics().registry.getMetricsAsJSON();
  const names = new Set<string>();
  for (const { name, type } of registered) {
    names.add(name);
    if (String(type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

const metricsIn = (expr: string) => [...expr.matchAll(/\b(effectd_[a-z0-9_]+)\b/g)].map((m) => m[1]!);

describe('the Grafana dashboard (deploy/grafana/dashboards/effectd.json)', () => {
  it('every metric name is in METRIC and registered by PromMetrics, and nothing else is registered', async () => {
    const registered = (await new PromMetrics().registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(registered).toEqual(Object.values(METRIC).sort());
  });

  it('every panel queries at least one metric, and only metrics effectd exports', async () => {
    const exported = await exportedSeries();
    expect(queried.length).toBeGreaterThanOrEqual(15);
    for (const panel of queried) {
      const exprs = (panel.targets ?? []).map((t) => t.expr ?? '');
      expect(exprs.length, `panel "${panel.title}" has no query`).toBeGreaterThan(0);
      for (const expr of exprs) {
        const names = metricsIn(expr);
        expect(names.length, `panel "${panel.title}": "${expr}" names no effectd metric`).toBeGreaterThan(0);
        for (const name of names) expect(exported.has(name), `panel "${panel.title}" queries ${name}, which effectd does not export`).toBe(true);
        expect(balanced(expr), `panel "${panel.title}": unbalanced brackets in "${expr}"`).toBe(true);
      }
    }
  });

  it('covers what an on-call engineer needs first, and every metric effectd exports', () => {
    const used = new Set(queried.flatMap((p) => (p.targets ?? []).flatMap((t) => metricsIn(t.expr ?? ''))).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    // Same counts as effectd_duplicates_prevented_total{reason="replay"|"hold"}, which the dashboard shows.
    const shownThroughAnother = new Set<string>([METRIC.replays, METRIC.contentHolds]);
    expect(Object.values(METRIC).filter((m) => !used.has(m) && !shownThroughAnother.has(m))).toEqual([]);
    const titles = queried.map((p) => p.title.toLowerCase()).join(' | ');
    for (const need of ['throughput', 'outcome', 'unknown', 'human', 'duplicates prevented', 'lag', 'latency']) expect(titles).toContain(need);
    expect(queried.some((p) => (p.targets ?? []).some((t) => /histogram_quantile\(0\.99/.test(t.expr ?? '')))).toBe(true);
  });

  it('is well-formed for provisioning: unique ids, a 24-column grid, the provisioned datasource everywhere', () => {
    const datasource = /uid:\s*(\S+)/.exec(readFileSync('deploy/grafana/provisioning/datasources/prometheus.yml', 'utf8'))![1];
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    expect(dashboard.uid).toBe('effectd-overview');
    for (const panel of panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      if (panel.type === 'row') continue;
      expect(panel.datasource?.uid, panel.title).toBe(datasource);
      for (const target of panel.targets ?? []) expect(target.datasource?.uid, panel.title).toBe(datasource);
    }
    const provider = readFileSync('deploy/grafana/provisioning/dashboards/effectd.yml', 'utf8');
    const compose = readFileSync('docker-compose.yml', 'utf8');
    const path = /path:\s*(\S+)/.exec(provider)![1]!;
    expect(compose).toContain(`./deploy/grafana/dashboards:${path}`);
    expect(compose).toContain('./deploy/grafana/provisioning:/etc/grafana/provisioning');
    expect(compose).toContain('./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml');
    expect(readFileSync('deploy/prometheus/prometheus.yml', 'utf8')).toMatch(/metrics_path: \/metrics[\s\S]*targets: \["effectd:8080"\]/);
  });
});

function balanced(expr: string): boolean {
  const open: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  let quoted = false;
  for (const ch of expr) {
    if (ch === '"') quoted = !quoted;
    if (quoted) continue;
    if ('([{'.includes(ch)) open.push(ch);
    else if (ch in pairs && open.pop() !== pairs[ch]) return false;
  }
  return open.length === 0 && !quoted;
}
