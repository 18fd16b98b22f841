import type { Ingress } from './options.js';

export const ROLES = ['effectd', 'postgres', 'kafka broker', 'provider', 'load generator'] as const;

export interface LaneKey {
  ingress: Ingress;
  /** The effectd build: 'this' checkout or 'baseline' (direct lane: '-'). */
  build: string;
  /** effectd instances (0 for the direct lane). */
  instances: number;
  concurrency: number;
}

/** One rep of one lane, as measured. */
export interface LaneRun extends LaneKey {
  rep: number;
  effects: number;
  notDone: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU ms per effect, per role (every process of the role summed). */
  cpuMsPerEffect: Record<string, number>;
  /** Share of the whole machine's CPU that was busy (1 = every core). */
  machineBusy: number;
  walBytesPerEffect: number;
  walRecordsPerEffect: number;
  walSyncsPerEffect: number;
  xactCommitsPerEffect: number;
  statementsPerEffect?: number;
  /** Requests the broker served its clients during the lane, per effect (its JMX count). */
  brokerRequestsPerEffect?: number;
  brokerRequestsByApi?: Record<string, number>;
}

/** A lane over its reps: the median of each number; added latency against the direct lane of the same rep and concurrency. */
export interface LaneSummary extends Omit<LaneRun, 'rep' | 'seconds'> {
  reps: number;
  addedP50?: number;
  addedP99?: number;
}

export const median = (values: readonly number[]): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const laneId = (k: LaneKey) => `${k.build}/${k.ingress}/${k.instances}/${k.concurrency}`;

export function summarize(runs: readonly LaneRun[]): LaneSummary[] {
  const lanes = new Map<string, LaneRun[]>();
  for (const run of runs) lanes.set(laneId(run), [...(lanes.get(laneId(run)) ?? []), run]);
  const direct = (run: LaneRun) => runs.find((r) => r.ingress === 'direct' && r.concurrency === run.concurrency && r.rep === run.rep);
  return [...lanes.values()].map((reps) => {
    const first = reps[0]!;
    const m = (pick: (r: LaneRun) => number | undefined) => {
      const values = reps.map(pick).filter((v): v is number => v !== undefined && Number.isFinite(v));
      return values.length ? median(values) : undefined;
    };
    const added = first.ingress === 'direct' ? {} : {
      addedP50: m((r) => { const d = direct(r); return d ? r.p50 - d.p50 : undefined; }),
      addedP99: m((r) => { const d = direct(r); return d ? r.p99 - d.p99 : undefined; }),
    };
    const statements = m((r) => r.statementsPerEffect);
    const brokerRequests = m((r) => r.brokerRequestsPerEffect);
    const apis = [...new Set(reps.flatMap((r) => Object.keys(r.brokerRequestsByApi ?? {})))];
    return {
      ingress: first.ingress, build: first.build, instances: first.instances, concurrency: first.concurrency, reps: reps.length,
      effects: first.effects, notDone: reps.reduce((s, r) => s + r.notDone, 0),
      perSecond: m((r) => r.perSecond)!, p50: m((r) => r.p50)!, p99: m((r) => r.p99)!, ...added,
      cpuMsPerEffect: Object.fromEntries(ROLES.map((role) => [role, m((r) => r.cpuMsPerEffect[role]) ?? 0])),
      machineBusy: m((r) => r.machineBusy)!,
      walBytesPerEffect: m((r) => r.walBytesPerEffect)!, walRecordsPerEffect: m((r) => r.walRecordsPerEffect)!,
      walSyncsPerEffect: m((r) => r.walSyncsPerEffect)!, xactCommitsPerEffect: m((r) => r.xactCommitsPerEffect)!,
      ...(statements !== undefined ? { statementsPerEffect: statements } : {}),
      ...(brokerRequests !== undefined ? { brokerRequestsPerEffect: brokerRequests, brokerRequestsByApi: Object.fromEntries(apis.map((api) => [api, m((r) => r.brokerRequestsByApi?.[api] ?? 0)!])) } : {}),
    };
  });
}

const fixed = (v: number | undefined, digits: number) => (v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(digits));

export function renderTable(summaries: readonly LaneSummary[]): string {
  const header = ['ingress', 'build', 'inst', 'c', 'effects/s', 'p50 ms', 'p99 ms', '+p50 ms', '+p99 ms', 'not done',
    ...ROLES.map((r) => `CPU ${r} ms/eff`), ...(summaries.some((s) => s.brokerRequestsPerEffect !== undefined) ? ['broker req/eff'] : []), 'machine busy', 'WAL B/eff', 'WAL rec/eff', 'wal_sync/eff', 'xact/eff', ...(summaries.some((s) => s.statementsPerEffect !== undefined) ? ['stmts/eff'] : [])];
  const rows = summaries.map((s) => [
    s.ingress, s.build, String(s.instances), String(s.concurrency), fixed(s.perSecond, 0), fixed(s.p50, 2), fixed(s.p99, 2), fixed(s.addedP50, 2), fixed(s.addedP99, 2), String(s.notDone),
    ...ROLES.map((r) => fixed(s.cpuMsPerEffect[r], 3)), ...(summaries.some((x) => x.brokerRequestsPerEffect !== undefined) ? [fixed(s.brokerRequestsPerEffect, 3)] : []), `${fixed(s.machineBusy * 100, 0)}%`,
    fixed(s.walBytesPerEffect, 0), fixed(s.walRecordsPerEffect, 1), fixed(s.walSyncsPerEffect, 2), fixed(s.xactCommitsPerEffect, 2),
    ...(s.statementsPerEffect !== undefined ? [fixed(s.statementsPerEffect, 2)] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}

/** Per lane that used the broker: its requests per effect by API, largest first (undefined when no lane has counts). */
export function renderBrokerRequests(summaries: readonly LaneSummary[]): string | undefined {
  const lanes = summaries.filter((s) => s.brokerRequestsPerEffect !== undefined && s.ingress !== 'direct');
  if (lanes.length === 0) return undefined;
  return lanes.map((s) => {
    const apis = Object.entries(s.brokerRequestsByApi ?? {}).filter(([, n]) => n >= 0.0005).sort((a, b) => b[1] - a[1]);
    return `  ${s.ingress} ${s.build} inst ${s.instances} c=${s.concurrency}: ${fixed(s.brokerRequestsPerEffect, 3)} — ${apis.map(([api, n]) => `${api} ${fixed(n, 3)}`).join(', ') || 'none'}`;
  }).join('\n');
}

/** this ÷ baseline per metric, paired by rep (same rep, same lane), median over reps. */
export interface Ratio extends Omit<LaneKey, 'build'> {
  perSecond: number;
  p50: number;
  addedP50: number;
  effectdCpu: number;
  postgresCpu: number;
  xactCommits: number;
  walBytes: number;
}

export function ratios(runs: readonly LaneRun[]): Ratio[] {
  const direct = (r: LaneRun) => runs.find((d) => d.ingress === 'direct' && d.concurrency === r.concurrency && d.rep === r.rep);
  const out: Ratio[] = [];
  const mine = runs.filter((r) => r.build === 'this');
  const keys = [...new Map(mine.map((r) => [`${r.ingress}/${r.instances}/${r.concurrency}`, r])).values()];
  for (const key of keys) {
    const pairs = mine
      .filter((r) => r.ingress === key.ingress && r.instances === key.instances && r.concurrency === key.concurrency)
      .map((r) => [r, runs.find((b) => b.build === 'baseline' && b.ingress === r.ingress && b.instances === r.instances && b.concurrency === r.concurrency && b.rep === r.rep)] as const)
      .filter((p): p is readonly [LaneRun, LaneRun] => p[1] !== undefined);
    if (pairs.length === 0) continue;
    const m = (pick: (r: LaneRun) => number) => median(pairs.map(([a, b]) => pick(a) / pick(b)));
    out.push({
      ingress: key.ingress, instances: key.instances, concurrency: key.concurrency,
      perSecond: m((r) => r.perSecond), p50: m((r) => r.p50), addedP50: m((r) => r.p50 - (direct(r)?.p50 ?? 0)),
      effectdCpu: m((r) => r.cpuMsPerEffect.effectd ?? NaN), postgresCpu: m((r) => r.cpuMsPerEffect.postgres ?? NaN),
      xactCommits: m((r) => r.xactCommitsPerEffect), walBytes: m((r) => r.walBytesPerEffect),
    });
  }
  return out;
}

export function renderRatios(list: readonly Ratio[]): string {
  const header = ['ingress', 'inst', 'c', 'effects/s', 'p50', '+p50', 'CPU effectd/eff', 'CPU postgres/eff', 'xact/eff', 'WAL B/eff'];
  const rows = list.map((r) => [r.ingress, String(r.instances), String(r.concurrency), ...[r.perSecond, r.p50, r.addedP50, r.effectdCpu, r.postgresCpu, r.xactCommits, r.walBytes].map((v) => fixed(v, 2))]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}
