/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`, e.g. from `npm run bench:throughput -- --profile DIR`):
 * the functions with the most self time, and self time by area (HTTP framework, body parsing, zod,
 * hashing, JSON, pg, GC, effectd's own code…). Idle time is left out of the shares.
 *
 *   node packages/bench/dist/packages/bench/src/profile-summary.js FILE.cpuprofile [--top 25] [--from-ms A] [--to-ms B] [--timeline] [--callers FN] [--json]
 *
 * --from-ms/--to-ms keep only the samples in that window (ms since the profile started), e.g. to
 * leave out start-up; --timeline prints the busy ms of each second, to find the windows;
 * --callers FN splits FN's self time by who called it: the nearest caller that is a package or
 * effectd's own code (e.g. --callers writev: pg's socket, the HTTP server's or the provider client's).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

/** First match wins: native functions are placed by name, JavaScript by where it lives. */
const AREAS: [area: string, test: (f: CallFrame) => boolean][] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['V8/native, unattributed', (f) => f.functionName === '(program)'],
  ['socket writes', (f) => f.url === '' && /^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeAsciiString|writeUcs2String)$/.test(f.functionName)],
  ['JSON parse/stringify', (f) => f.url === '' && /^(parse|stringify)$/.test(f.functionName)],
  ['crypto (HMAC, hashes)', (f) => /node:internal\/crypto/.test(f.url) || (f.url === '' && /^(digest|update|createHmac|createHash|Hmac|Hash)$/.test(f.functionName))],
  ['body parsing', (f) => /node_modules\/(body-parser|raw-body|iconv-lite|content-type|type-is|media-typer|bytes)\//.test(f.url)],
  ['Express/Nest routing', (f) => /node_modules\/(express|router|@nestjs|path-to-regexp|finalhandler|send|on-finished|parseurl|qs|depd|rxjs|reflect-metadata|iterare)\//.test(f.url)],
  ['zod', (f) => /node_modules\/zod\//.test(f.url)],
  ['pg', (f) => /node_modules\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+|pgpass|pg-connection-string)\//.test(f.url)],
  ['kafkajs', (f) => /node_modules\/kafkajs\//.test(f.url)],
  ['logging (pino)', (f) => /node_modules\/(pino|pino-[a-z-]+|sonic-boom|thread-stream)\//.test(f.url)],
  ['tracing (OpenTelemetry)', (f) => /node_modules\/@opentelemetry\//.test(f.url)],
  ['metrics (prom-client)', (f) => /node_modules\/(prom-client|tdigest|bintrees)\//.test(f.url)],
  ['other node_modules', (f) => /node_modules\//.test(f.url)],
  ['effectd: canonicalization/intent', (f) => /\/src\/core\/(canonical-json|intent|identity|money|json-number-literals|arg-fields)\.js$/.test(f.url)],
  ['effectd: events/fold', (f) => /\/src\/core\/(events|fold|effect-state|persistent-map)\.js$/.test(f.url)],
  ['effectd: ledger', (f) => /\/src\/ledger\//.test(f.url)],
  ['effectd: shell/gateway', (f) => /\/src\/(shell|gateway)\//.test(f.url)],
  ['effectd: transport/api', (f) => /\/src\/(api|transport)\//.test(f.url)],
  ['effectd: providers', (f) => /\/src\/providers\//.test(f.url)],
  ['effectd: other', (f) => /\/dist\/|\/src\//.test(f.url) && !/node:/.test(f.url)],
  ['node: http', (f) => /node:(_http_|http|internal\/http)/.test(f.url)],
  ['node: net/streams', (f) => /node:(net|stream|internal\/(streams|stream_base_commons|net))/.test(f.url)],
  ['node: timers/event loop', (f) => /node:(timers|internal\/(timers|process\/task_queues|async_hooks))/.test(f.url)],
  ['node: other', (f) => /^node:/.test(f.url)],
  ['native, other', () => true],
];

export interface ProfileSummary {
  file: string;
  /** Wall time the profile covers, ms. */
  wallMs: number;
  /** Time not idle, ms. */
  busyMs: number;
  /** Busy (non-idle) ms of each second of the profile, for --timeline. */
  timeline: number[];
  areas: { area: string; ms: number; share: number }[];
  top: { fn: string; where: string; area: string; ms: number; share: number }[];
  /** With --callers: FN's self time by nearest package-or-effectd caller. */
  callers?: { caller: string; ms: number; share: number }[];
}

export function areaOf(frame: CallFrame): string {
  return AREAS.find(([, test]) => test(frame))![0];
}

export function summarizeProfile(profile: CpuProfile, file: string, topN: number, window: { fromMs?: number; toMs?: number } = {}, callersOf?: string): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  // timeDeltas[i] is the time since the previous sample: sample i ran until the next one.
  const self = new Map<number, number>();
  const timeline: number[] = [];
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const us = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i]!;
    const second = Math.floor(at / 1e6);
    if (!idleIds.has(id)) timeline[second] = (timeline[second] ?? 0) + us / 1000;
    if ((window.fromMs !== undefined && at < window.fromMs * 1000) || (window.toMs !== undefined && at >= window.toMs * 1000)) continue;
    self.set(id, (self.get(id) ?? 0) + us);
  }
  const fns = new Map<string, { fn: string; where: string; area: string; us: number }>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    const area = areaOf(frame);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = frame.url ? `${frame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${frame.lineNumber + 1}` : '(native)';
    const key = `${frame.functionName}@${where}`;
    const entry = fns.get(key) ?? { fn: frame.functionName || '(anonymous)', where, area, us: 0 };
    entry.us += us;
    fns.set(key, entry);
  }
  let callers: ProfileSummary['callers'];
  if (callersOf) {
    const by = new Map<string, number>();
    let total = 0;
    for (const [id, us] of self) {
      if (byId.get(id)!.callFrame.functionName !== callersOf) continue;
      total += us;
      let up = parent.get(id);
      while (up !== undefined && !/node_modules\/|\/dist\//.test(byId.get(up)!.callFrame.url)) up = parent.get(up);
      const frame = up === undefined ? undefined : byId.get(up)!.callFrame;
      const caller = frame ? `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${frame.lineNumber + 1}` : '(no package caller)';
      by.set(caller, (by.get(caller) ?? 0) + us);
    }
    callers = [...by].map(([caller, us]) => ({ caller, ms: us / 1000, share: total > 0 ? us / total : 0 })).sort((a, b) => b.ms - a.ms);
  }
  const idle = areas.get('idle') ?? 0;
  const busy = [...areas.values()].reduce((a, b) => a + b, 0) - idle;
  const share = (us: number) => (busy > 0 ? us / busy : 0);
  return {
    file, wallMs: (profile.endTime - profile.startTime) / 1000, busyMs: busy / 1000, timeline: Array.from(timeline, (ms) => ms ?? 0),
    areas: [...areas].filter(([a]) => a !== 'idle').map(([area, us]) => ({ area, ms: us / 1000, share: share(us) })).sort((a, b) => b.ms - a.ms),
    top: [...fns.values()].filter((f) => f.area !== 'idle').sort((a, b) => b.us - a.us).slice(0, topN).map((f) => ({ fn: f.fn, where: f.where, area: f.area, ms: f.us / 1000, share: share(f.us) })),
    ...(callers ? { callers } : {}),
  };
}

function render(s: ProfileSummary, timeline: boolean): string {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  return [
    `${s.file}: ${s.wallMs.toFixed(0)} ms profiled, ${s.busyMs.toFixed(0)} ms not idle in the window`,
    ...(timeline ? ['', 'busy ms per second of the profile:', s.timeline.map((ms, i) => `${i}s:${ms.toFixed(0)}`).join(' ')] : []),
    '', 'self time by area (share of non-idle):',
    ...s.areas.map((a) => `  ${pct(a.share)}  ${a.ms.toFixed(0).padStart(7)} ms  ${a.area}`),
    '', `top ${s.top.length} functions by self time:`,
    ...s.top.map((f) => `  ${pct(f.share)}  ${f.ms.toFixed(0).padStart(7)} ms  ${f.fn}  ${f.where}  [${f.area}]`),
    ...(s.callers ? ['', 'callers (nearest package or effectd frame), share of that function:', ...s.callers.map((c) => `  ${pct(c.share)}  ${c.ms.toFixed(0).padStart(7)} ms  ${c.caller}`)] : []),
  ].join('\n');
}

const isMain = import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: {
    top: { type: 'string', default: '25' }, 'from-ms': { type: 'string' }, 'to-ms': { type: 'string' }, timeline: { type: 'boolean' }, callers: { type: 'string' }, json: { type: 'boolean' },
  } });
  const top = Number(values.top);
  const fromMs = values['from-ms'] === undefined ? undefined : Number(values['from-ms']);
  const toMs = values['to-ms'] === undefined ? undefined : Number(values['to-ms']);
  if (positionals.length === 0 || !Number.isInteger(top) || top <= 0 || [fromMs, toMs].some((v) => v !== undefined && !(v >= 0))) {
    console.error('Usage: node packages/bench/dist/packages/bench/src/profile-summary.js FILE.cpuprofile [FILE…] [--top N (25)] [--from-ms A] [--to-ms B] [--timeline] [--callers FN] [--json]');
    process.exit(2);
  }
  for (const file of positionals) {
    let profile: CpuProfile;
    try {
      profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    } catch (error) {
      console.error(`${file}: not a readable .cpuprofile (${(error as Error).message})`);
      process.exit(1);
    }
    const summary = summarizeProfile(profile, file, top, { ...(fromMs !== undefined ? { fromMs } : {}), ...(toMs !== undefined ? { toMs } : {}) }, values.callers);
    console.log(values.json ? JSON.stringify(summary, null, 2) : `${render(summary, values.timeline === true)}\n`);
  }
}
