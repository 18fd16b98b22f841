// A long workflow summarized: an overview strip with one cell per effect (coloured by state, the
// window outlined), the lanes of a window of effects on their own time axis, and controls to move
// the window (earlier, later, to a step, only what is not committed). A short workflow is drawn whole.
import { clear, h, s, STATE_LABEL } from './dom.js';
import { STATE_COLOR, UNDONE_COLOR, workflowPicture } from './timeline.js';

/** More effects than this and the picture is windowed. */
export const LONG = 30;
/** Lanes drawn at a time in a long workflow. */
export const WINDOW = 20;

const CELL = 9;
const GAP = 2;

/** The effects in the order the picture draws them: as declared, then by step. */
export function orderedEffects(workflow) {
  return [...workflow.effects].sort((a, b) => Date.parse(a.declaredAt ?? 0) - Date.parse(b.declaredAt ?? 0) || String(a.step).localeCompare(String(b.step), undefined, { numeric: true }));
}

/** A saga's steps whose compensation committed: they happened and were undone. */
export function undoneEffects(workflow) {
  return new Set((workflow.saga?.steps ?? []).filter((st) => st.compensation?.state === 'committed').map((st) => st.effectId));
}

/** `step 3`, or a saga's step name as it is. */
export function stepName(effect) {
  const step = String(effect.step);
  return `${/^\d+$/.test(step) ? `step ${step}` : step}${effect.slot && effect.slot !== '0' ? ` · slot ${effect.slot}` : ''}`;
}

/**
 * The timeline of a workflow, windowed when it is long. options: { selected, onSelect, scale, width() }.
 * Returns { el, update(workflow), redraw(), showEffect(effectId) }.
 */
export function lanes(options) {
  let workflow;
  let ordered = [];
  let undone = new Set();
  let start;
  let only = 'all';
  let scaleUsed;
  const picture = h('div', { class: 'picture', 'data-testid': 'timeline' });
  const strip = h('div', { class: 'strip', 'data-testid': 'overview-strip' });
  const where = h('span', { class: 'pager-label muted', 'data-testid': 'lanes-label', 'aria-live': 'polite' });
  const earlier = h('button', { type: 'button', class: 'ghost-dark', 'data-testid': 'lanes-prev', onclick: () => move(-WINDOW) }, '‹ Earlier');
  const later = h('button', { type: 'button', class: 'ghost-dark', 'data-testid': 'lanes-next', onclick: () => move(WINDOW) }, 'Later ›');
  const filter = h('select', { id: 'lanes-only', 'data-testid': 'lanes-only', onchange: () => { only = filter.value; start = 0; draw(); } },
    h('option', { value: 'all' }, 'every effect'),
    h('option', { value: 'open' }, 'only effects not committed'));
  const jump = h('input', { id: 'lanes-jump', type: 'search', size: 10, placeholder: 'e.g. 250', 'data-testid': 'lanes-jump', autocomplete: 'off' });
  const jumpError = h('span', { class: 'error small', role: 'alert', 'data-testid': 'lanes-jump-error' });
  const jumpForm = h('form', { class: 'jump', onsubmit: (ev) => {
    ev.preventDefault();
    const wanted = jump.value.trim().toLowerCase();
    const hit = ordered.find((e) => String(e.step).toLowerCase() === wanted) ?? ordered.find((e) => stepName(e).toLowerCase().includes(wanted) || e.effectId === wanted);
    jumpError.textContent = hit ? '' : `no step ${jump.value.trim()} in this workflow`;
    if (hit) showEffect(hit.effectId);
  } }, h('label', { for: 'lanes-jump' }, 'Go to step'), jump, h('button', { type: 'submit', class: 'ghost-dark' }, 'Go'), jumpError);
  const bar = h('div', { class: 'lanes-bar' },
    h('nav', { class: 'pager', 'aria-label': 'timeline window' }, earlier, where, later),
    h('label', { class: 'inline-field', for: 'lanes-only' }, 'Show ', filter),
    jumpForm);
  const el = h('div', { class: 'lanes' }, strip, bar, picture);

  const visible = () => (only === 'open' ? ordered.filter((e) => e.state !== 'committed' || undone.has(e.effectId)) : ordered);
  const long = () => ordered.length > LONG;

  function move(by) {
    start = Math.max(0, Math.min(start + by, visible().length - WINDOW));
    draw();
  }

  function showEffect(effectId) {
    if (!visible().some((e) => e.effectId === effectId)) { only = 'all'; filter.value = 'all'; }
    const i = visible().findIndex((e) => e.effectId === effectId);
    if (i < 0) return;
    start = Math.max(0, Math.min(i - Math.floor(WINDOW / 2), visible().length - WINDOW));
    options.selected = effectId;
    draw();
    picture.querySelector(`g.lane[data-effect-id="${CSS.escape(effectId)}"] .lane-label`)?.focus();
  }

  function draw() {
    if (!workflow) return;
    const isLong = long();
    bar.hidden = !isLong;
    strip.hidden = !isLong;
    const list = visible();
    let shown = list;
    if (isLong) {
      start = Math.max(0, Math.min(start ?? 0, Math.max(0, list.length - WINDOW)));
      shown = list.slice(start, start + WINDOW);
      earlier.disabled = start === 0;
      later.disabled = start + WINDOW >= list.length;
      where.textContent = shown.length ? `effects ${start + 1}–${start + shown.length} of ${list.length}${only === 'open' ? ` not committed (${ordered.length} in all)` : ''}` : 'every effect is committed';
      drawStrip(new Set(shown.map((e) => e.effectId)));
    }
    const ids = new Set(shown.map((e) => e.effectId));
    const times = shown.flatMap((e) => workflow.timeline.filter((t) => t.effectId === e.effectId).map((t) => Date.parse(t.at)));
    const [from, to] = [Math.min(...times), Math.max(...times)];
    const part = isLong
      ? { ...workflow, effects: shown, timeline: workflow.timeline.filter((t) => (t.effectId ? ids.has(t.effectId) : Date.parse(t.at) >= from && Date.parse(t.at) <= to)) }
      : workflow;
    if (!part.timeline.length) return clear(picture, h('p', { class: 'empty' }, 'Nothing to draw.'));
    const { svg, scale } = workflowPicture(part, { now: Date.now(), width: options.width(), scale: options.scale, selected: options.selected, onSelect: options.onSelect, undone });
    scaleUsed = scale;
    picture.dataset.scale = scale;
    clear(picture, svg);
  }

  function drawStrip(inWindow) {
    const width = Math.max(320, options.width());
    const perRow = Math.max(10, Math.floor((width - 16) / (CELL + GAP)));
    const rows = Math.ceil(ordered.length / perRow);
    const height = rows * (CELL + GAP) + 8;
    const svg = s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'strip-svg', role: 'img', 'aria-label': `every effect of the workflow, one cell each: ${summary()}` });
    const visibleIds = new Set(visible().map((e) => e.effectId));
    ordered.forEach((e, i) => {
      const x = 8 + (i % perRow) * (CELL + GAP);
      const y = 4 + Math.floor(i / perRow) * (CELL + GAP);
      const isUndone = undone.has(e.effectId);
      const cell = s('rect', { x, y, width: CELL, height: CELL, rx: 1.5, fill: isUndone ? UNDONE_COLOR : STATE_COLOR[e.state] ?? '#8c959f',
        class: `cell${inWindow.has(e.effectId) ? ' in-window' : ''}${visibleIds.has(e.effectId) ? '' : ' filtered'}`, dataset: { effectId: e.effectId, state: e.state } },
      s('title', {}, `${stepName(e)} · ${e.tool} for ${e.target} · ${isUndone ? 'undone' : STATE_LABEL[e.state] ?? e.state}`));
      cell.addEventListener('click', () => showEffect(e.effectId));
      svg.append(cell);
    });
    clear(strip, h('div', { class: 'strip-head small muted' }, `${ordered.length} effects: ${summary()}. Click a cell to show its lane.`), svg);
  }

  function summary() {
    const counts = {};
    for (const e of ordered) {
      const key = undone.has(e.effectId) ? 'undone' : STATE_LABEL[e.state] ?? e.state;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(', ');
  }

  return {
    el,
    get scale() { return scaleUsed; },
    update(next) {
      workflow = next;
      ordered = orderedEffects(next);
      undone = undoneEffects(next);
      if (start === undefined) {
        start = 0;
        if (options.selected && long()) return showEffect(options.selected);
      }
      draw();
    },
    redraw: draw,
    showEffect,
    setScale(scale) { options.scale = scale; draw(); },
  };
}
