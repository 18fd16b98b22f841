// The workflow as a picture: one lane per effect, attempts as bars, checks and outcomes as marks,
// time in `unknown` and time with a human as shaded bands on a shared time axis.
import { clock, duration, s, STATE_LABEL } from './dom.js';
import { closed } from './lifecycle.js';

const GUTTER = 260;
const RIGHT = 24;
const AXIS = 36;
const LANE = 48;

const OUTCOME_COLOR = { committed: '#1a7f37', failed_before_effect: '#6e7781', terminal_failure: '#cf222e', unknown: '#bf8700' };
const VERDICT_COLOR = { committed: '#1a7f37', not_committed: '#6e7781', pending: '#8c959f' };
/** A committed step a compensation undid: neither green (it is not standing) nor red (it did happen). */
export const UNDONE_COLOR = '#bf3989';
export const STATE_COLOR = {
  committed: '#1a7f37', failed_before_effect: '#6e7781', terminal_failure: '#cf222e', unknown: '#bf8700',
  escalated: '#bc4c00', dispatching: '#0969da', declared: '#8c959f', held: '#8250df',
};

function linearTicks(span) {
  const target = span / 7;
  const pow = 10 ** Math.floor(Math.log10(Math.max(target, 1)));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((v) => v >= target) ?? 10 * pow;
  const ticks = [];
  for (let t = 0; t <= span + 1e-9; t += step) ticks.push(t);
  return ticks;
}

const LOG_TICKS = [0, 1, 10, 100, 1_000, 10_000, 60_000, 600_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000];

function tickLabel(ms) {
  return ms === 0 ? '+0' : `+${duration(ms).replace(/\.0 s$/, ' s')}`;
}

export function makeScale(t0, t1, kind, width) {
  const span = Math.max(t1 - t0, 1);
  const x0 = GUTTER + 8;
  const x1 = width - RIGHT;
  if (kind === 'log') {
    const max = Math.log10(1 + span);
    const x = (t) => x0 + (Math.log10(1 + Math.max(0, t - t0)) / max) * (x1 - x0);
    return { x, ticks: LOG_TICKS.filter((v) => v <= span), span, x0, x1 };
  }
  const x = (t) => x0 + ((t - t0) / span) * (x1 - x0);
  return { x, ticks: linearTicks(span), span, x0, x1 };
}

/** Which scale reads best: linear unless the picture spans orders of magnitude. */
export function autoScale(t0, t1, events) {
  const span = t1 - t0;
  if (span < 20_000) return 'linear';
  const sorted = events.map((e) => Date.parse(e.at)).sort((a, b) => a - b);
  const gaps = sorted.slice(1).map((t, i) => t - sorted[i]).filter((g) => g > 0);
  const smallest = gaps.length ? Math.min(...gaps) : span;
  return span / Math.max(smallest, 1) > 500 ? 'log' : 'linear';
}

function title(text) {
  return s('title', {}, text);
}

/**
 * workflow: the GET /v1/workflows/:id answer. Returns {svg, scale}.
 * options: { now, width (px), scale: 'linear' | 'log' | 'auto', selected: effectId, onSelect(effectId) }
 */
export function workflowPicture(workflow, options) {
  const now = options.now ?? Date.now();
  const events = workflow.timeline;
  const effects = [...workflow.effects].sort((a, b) => Date.parse(a.declaredAt ?? 0) - Date.parse(b.declaredAt ?? 0) || String(a.step).localeCompare(String(b.step), undefined, { numeric: true }));
  const decisions = events.filter((e) => !e.effectId);
  const open = effects.some((e) => !closed(e.state));
  const times = events.map((e) => Date.parse(e.at));
  const t0 = Math.min(...times);
  const t1 = Math.max(...times, open ? now : -Infinity);
  const kind = options.scale === 'auto' || !options.scale ? autoScale(t0, t1, events) : options.scale;
  const W = Math.max(760, Math.round(options.width ?? 1100));
  const sc = makeScale(t0, t1, kind, W);
  const lanes = [...(decisions.length ? [{ kind: 'decisions' }] : []), ...effects.map((effect) => ({ kind: 'effect', effect }))];
  const height = AXIS + lanes.length * LANE + 14;
  const svg = s('svg', { viewBox: `0 0 ${W} ${height}`, width: W, height, class: 'timeline', role: 'img', 'aria-label': `timeline of workflow ${workflow.workflowId}` });
  svg.append(defs());

  // Axis and grid.
  const axis = s('g', { class: 'axis' });
  axis.append(s('text', { x: 12, y: 22, class: 'axis-start' }, `${clock(new Date(t0).toISOString())} · ${kind} scale`));
  for (const tick of sc.ticks) {
    const x = sc.x(t0 + tick);
    axis.append(s('line', { x1: x, x2: x, y1: AXIS - 6, y2: height - 10, class: 'grid' }));
    axis.append(s('text', { x, y: AXIS - 12, 'text-anchor': 'middle', class: 'tick' }, tickLabel(tick)));
  }
  svg.append(axis);

  lanes.forEach((lane, i) => {
    const y = AXIS + i * LANE;
    const mid = y + LANE / 2;
    const g = s('g', { class: 'lane' });
    svg.append(g);
    if (lane.kind === 'decisions') {
      g.append(s('rect', { x: 0, y, width: W, height: LANE, class: 'lane-bg decisions' }));
      g.append(s('text', { x: 28, y: y + 21, class: 'lane-title' }, workflow.saga ? `saga ${workflow.saga.saga}` : 'workflow'));
      g.append(s('text', { x: 28, y: y + 37, class: 'lane-sub' }, workflow.saga ? workflow.saga.status : 'decisions'));
      for (const d of decisions) workflowMark(g, sc, d, mid);
      return;
    }
    const { effect } = lane;
    const mine = events.filter((e) => e.effectId === effect.effectId);
    const selected = options.selected === effect.effectId;
    const undone = options.undone?.has(effect.effectId) ?? false;
    g.setAttribute('class', `lane${selected ? ' selected' : ''}${undone ? ' undone' : ''}`);
    if (undone) g.dataset.undone = 'true';
    g.dataset.effectId = effect.effectId;
    g.append(s('rect', { x: 0, y, width: W, height: LANE, class: `lane-bg${i % 2 ? ' odd' : ''}` }));

    // Label (click to open the effect).
    const stateText = undone ? 'undone' : STATE_LABEL[effect.state] ?? effect.state;
    const label = s('g', { class: 'lane-label', tabindex: 0, role: 'button', 'aria-label': `${stepLabel(effect.step)}: ${effect.tool} for ${effect.target}, ${stateText} (effect ${effect.effectId})` });
    label.append(s('rect', { x: 0, y, width: GUTTER, height: LANE, class: 'label-hit' }));
    label.append(s('circle', { cx: 16, cy: y + 17, r: 5, fill: undone ? UNDONE_COLOR : STATE_COLOR[effect.state] ?? '#8c959f' }));
    label.append(s('text', { x: 28, y: y + 21, class: 'lane-title' }, truncate(`${stepLabel(effect.step)}${effect.slot && effect.slot !== '0' ? ` · slot ${effect.slot}` : ''}`, 24), s('tspan', { class: `lane-state state-${undone ? 'undone' : effect.state}`, dx: 8 }, stateText)));
    label.append(s('text', { x: 28, y: y + 37, class: 'lane-sub' }, truncate(`${effect.tool} · ${effect.target}`, 33)));
    // Whatever the gutter cut is whole in the tooltip (and in the accessible name above).
    label.append(title(`${stepLabel(effect.step)}${effect.slot && effect.slot !== '0' ? ` · slot ${effect.slot}` : ''} — ${stateText}${undone ? ' (committed, then undone by its compensation)' : ''}\n${effect.tool} for ${effect.target}\n${effect.effectId}\n${effect.message ?? ''}`));
    if (options.onSelect) {
      label.addEventListener('click', () => options.onSelect(effect.effectId));
      label.addEventListener('keydown', (ev) => ev.key === 'Enter' && options.onSelect(effect.effectId));
    }
    g.append(label);

    const declaredAt = Date.parse(effect.declaredAt ?? mine[0]?.at);
    const done = closed(effect.state);
    const settledAt = effect.settledAt ? Date.parse(effect.settledAt) : undefined;
    const laneEnd = done && settledAt ? settledAt : t1;
    g.append(s('line', { x1: sc.x(declaredAt), x2: sc.x(laneEnd), y1: mid, y2: mid, class: 'baseline' }));

    // Time in unknown, then time with a human (escalated, or terminal: a stored failure replayed).
    const escalated = mine.find((e) => e.type === 'EffectEscalated');
    const toHuman = escalated ?? mine.find((e) => e.type === 'AttemptFinished' && e.event.outcome === 'terminal_failure');
    if (effect.unknownSince) {
      const from = Date.parse(effect.unknownSince);
      const to = toHuman ? Date.parse(toHuman.at) : settledAt ?? t1;
      band(g, sc, from, to, y, 'unknown', `unknown ${duration(to - from)}`);
    }
    if (toHuman) {
      const from = Date.parse(toHuman.at);
      const to = laneEnd;
      band(g, sc, from, to, y, 'human', `with a human ${duration(to - from)}${done ? '' : ' (waiting)'}`);
    }

    // Attempts as bars from claim to answer (or to the lease's end when no answer came).
    for (const started of mine.filter((e) => e.type === 'AttemptStarted')) {
      const n = started.event.attempt;
      const finished = mine.find((e) => e.type === 'AttemptFinished' && e.event.attempt === n);
      const from = Date.parse(started.at);
      const to = finished ? Date.parse(finished.at) : Math.min(started.event.leaseUntil, t1);
      const x = sc.x(from);
      g.append(s('rect', { x, y: mid - 5, width: Math.max(3, sc.x(to) - x), height: 10, rx: 2, class: `attempt${finished ? '' : ' unanswered'}`, dataset: { type: 'AttemptStarted' } }, title(`${clock(started.at)} — ${started.summary}${finished ? '' : '\n(no answer recorded)'}`)));
    }
    for (const e of mine) mark(g, sc, e, mid);
  });

  if (open && t1 === now) {
    const x = sc.x(now);
    svg.append(s('line', { x1: x, x2: x, y1: AXIS - 4, y2: height - 8, class: 'now' }));
    svg.append(s('text', { x: x - 4, y: height - 1, 'text-anchor': 'end', class: 'now-label' }, 'now'));
  }
  return { svg, scale: kind };
}

/** `step 3` for a numbered step; a saga's named step as it is; `↩ book-hotel` for a compensation. */
function stepLabel(step) {
  const s = String(step);
  if (/^\d+$/.test(s)) return `step ${s}`;
  return s.startsWith('compensate:') ? `↩ undo ${s.slice('compensate:'.length)}` : s;
}

const SAGA_COLOR = { completed: '#1a7f37', compensated: '#bc4c00', compensation_failed: '#cf222e' };

function workflowMark(g, sc, e, mid) {
  const x = sc.x(Date.parse(e.at));
  const tip = title(`${clock(e.at)} — ${e.summary}`);
  const data = { dataset: { type: e.type } };
  switch (e.type) {
    case 'SagaStarted':
      g.append(s('path', { d: `M${x} ${mid + 8} L${x} ${mid - 8} L${x + 9} ${mid - 4} L${x} ${mid}`, class: 'mark saga-start', ...data }, tip));
      break;
    case 'SagaCompensating':
      g.append(s('path', { d: `M${x + 1} ${mid - 6} L${x - 5} ${mid} L${x + 1} ${mid + 6} M${x + 7} ${mid - 6} L${x + 1} ${mid} L${x + 7} ${mid + 6}`, class: 'mark saga-back', ...data }, tip));
      break;
    case 'SagaFinished':
      g.append(s('rect', { x: x - 6, y: mid - 6, width: 12, height: 12, rx: 2, fill: SAGA_COLOR[e.event.outcome] ?? '#8c959f', class: 'mark', ...data }, tip));
      break;
    default:
      g.append(s('circle', { cx: x, cy: mid, r: 5, class: 'mark decision', ...data }, tip));
  }
}

function band(g, sc, from, to, y, kind, text) {
  const x = sc.x(from);
  const width = Math.max(2, sc.x(to) - x);
  g.append(s('rect', { x, y: y + 8, width, height: LANE - 16, class: `band band-${kind}`, dataset: { band: kind } }, title(text)));
  // Text only where it fits: the whole label, else just the duration.
  const short = text.replace(/^[a-z ]+ /, '').replace(/ \(waiting\)$/, '');
  const fitting = [text, short].find((t) => t.length * 6.4 + 12 <= width);
  if (fitting) g.append(s('text', { x: x + 6, y: y + 19, class: `band-label band-label-${kind}` }, fitting));
}

function mark(g, sc, e, mid) {
  const x = sc.x(Date.parse(e.at));
  const tip = title(`${clock(e.at)} — ${e.summary}`);
  const data = { dataset: { type: e.type } };
  switch (e.type) {
    case 'EffectDeclared':
      g.append(s('path', { d: `M${x} ${mid - 6} L${x + 6} ${mid} L${x} ${mid + 6} L${x - 6} ${mid} Z`, class: 'mark declared', ...data }, tip));
      break;
    case 'AttemptFinished':
      g.append(s('circle', { cx: x, cy: mid, r: 6, fill: OUTCOME_COLOR[e.event.outcome] ?? '#8c959f', class: 'mark outcome', ...data }, tip));
      break;
    case 'ReconciliationChecked':
      g.append(s('rect', { x: x - 4.5, y: mid + 9, width: 9, height: 9, rx: 1.5, fill: VERDICT_COLOR[e.event.verdict] ?? '#8c959f', class: 'mark check', ...data }, tip));
      break;
    case 'EffectEscalated':
      g.append(s('path', { d: `M${x} ${mid - 8} L${x + 7} ${mid + 5} L${x - 7} ${mid + 5} Z`, class: 'mark escalated', ...data }, tip));
      break;
    case 'EffectResolved':
      g.append(s('path', { d: `M${x} ${mid - 8} L${x + 8} ${mid} L${x} ${mid + 8} L${x - 8} ${mid} Z`, class: 'mark resolved', ...data }, tip));
      break;
    case 'EffectHeld':
      g.append(s('g', { class: 'mark held', ...data }, s('rect', { x: x - 5, y: mid - 6, width: 3.5, height: 12 }), s('rect', { x: x + 1.5, y: mid - 6, width: 3.5, height: 12 }), tip));
      break;
    case 'EffectReleased':
      g.append(s('circle', { cx: x, cy: mid, r: 6, class: 'mark released', ...data }, tip));
      break;
    case 'EffectWithdrawn':
      // Settled not done without a dispatch: the not-done colour, where an attempt's outcome would be.
      g.append(s('circle', { cx: x, cy: mid, r: 6, fill: OUTCOME_COLOR.failed_before_effect, class: 'mark withdrawn', ...data }, tip));
      break;
    default:
      break;
  }
}

function defs() {
  const pattern = (id, color) => s('pattern', { id, width: 7, height: 7, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
    s('rect', { width: 7, height: 7, fill: color, 'fill-opacity': 0.16 }),
    s('line', { x1: 0, y1: 0, x2: 0, y2: 7, stroke: color, 'stroke-width': 2.5, 'stroke-opacity': 0.35 }));
  return s('defs', {}, pattern('hatch-unknown', '#bf8700'), pattern('hatch-human', '#cf222e'));
}

function truncate(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

/** The legend under the picture, as HTML. */
export const LEGEND = [
  ['declared', 'intent declared'],
  ['attempt', 'attempt (claim → answer)'],
  ['outcome', 'answer (colour = outcome)'],
  ['check', 'reconciliation check'],
  ['band-unknown', 'time in unknown'],
  ['escalated', 'escalated'],
  ['band-human', 'with a human'],
  ['resolved', 'resolved by an operator'],
  ['undone', 'undone (committed, then compensated)'],
];
