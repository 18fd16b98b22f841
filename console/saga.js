// A saga as a picture: its steps in order, each coloured by its effect's state, with the
// compensation under every step that has one (dashed until it runs).
import { s, STATE_LABEL } from './dom.js';
import { STATE_COLOR, UNDONE_COLOR } from './timeline.js';

const BOX_H = 54;
const GAP = 34;
const PAD = 14;

const REVERSIBILITY = { read: 'read', idempotent: 'idempotent', compensable: 'compensable', irreversible: 'irreversible' };

function label(state) {
  return state === 'not started' ? 'not started' : STATE_LABEL[state] ?? state;
}

function box(g, x, y, w, item, { dashed = false, title: extra, undone = false } = {}) {
  const started = item.state !== 'not started';
  const color = undone ? UNDONE_COLOR : started ? STATE_COLOR[item.state] ?? '#8c959f' : '#afb8c1';
  const node = s('g', { class: `saga-box${started ? '' : ' idle'}${undone ? ' undone' : ''}`, dataset: { step: item.name, state: item.state, ...(undone ? { undone: 'true' } : {}) } });
  node.append(s('rect', { x, y, width: w, height: BOX_H, rx: 7, fill: started ? `${color}14` : '#fff', stroke: color, 'stroke-width': started ? 1.6 : 1.2, ...(dashed ? { 'stroke-dasharray': '5 3' } : {}) }));
  node.append(s('rect', { x, y, width: 5, height: BOX_H, rx: 2, fill: color }));
  node.append(s('text', { x: x + 14, y: y + 19, class: `saga-name${undone ? ' struck' : ''}` }, fit(item.name, w)));
  node.append(s('text', { x: x + 14, y: y + 34, class: 'saga-tool' }, fit(item.tool, w)));
  const stateText = undone ? `undone · was ${label(item.state)}` : label(item.state);
  node.append(s('text', { x: x + 14, y: y + 48, class: 'saga-state', fill: color }, fit(`${stateText}${item.receipt ? ` · ${item.receipt}` : ''}`, w)));
  node.append(s('title', {}, `${item.name} (${item.tool})\n${stateText}${undone ? ' (its compensation committed)' : ''}${item.receipt ? `\nreceipt ${item.receipt}` : ''}${extra ? `\n${extra}` : ''}`));
  g.append(node);
}

function fit(text, w) {
  const n = Math.floor((w - 20) / 6.6);
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

export function sagaPicture(saga, width) {
  const n = saga.steps.length;
  const W = Math.max(640, width);
  const w = Math.min(230, (W - 2 * PAD - (n - 1) * GAP) / n);
  const hasComp = saga.steps.some((st) => st.compensation);
  const H = PAD + 16 + BOX_H + (hasComp ? 30 + BOX_H : 0) + PAD;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'saga', role: 'img', 'aria-label': `saga ${saga.saga}: ${saga.status}` });
  svg.append(s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, s('path', { d: 'M0 0 L10 5 L0 10 z', fill: '#8c959f' }))));
  const g = s('g', {});
  svg.append(g);
  const top = PAD + 16;
  saga.steps.forEach((step, i) => {
    const x = PAD + i * (w + GAP);
    g.append(s('text', { x, y: PAD + 6, class: 'saga-kind' }, `${i + 1} · ${REVERSIBILITY[step.reversibility] ?? step.reversibility}`));
    box(g, x, top, w, step, { undone: step.compensation?.state === 'committed' });
    if (i < n - 1) g.append(s('line', { x1: x + w + 3, y1: top + BOX_H / 2, x2: x + w + GAP - 3, y2: top + BOX_H / 2, class: 'saga-arrow', 'marker-end': 'url(#arrow)' }));
    if (step.compensation) {
      const cy = top + BOX_H + 30;
      const ran = step.compensation.state !== 'not started';
      g.append(s('line', { x1: x + w / 2, y1: cy - 3, x2: x + w / 2, y2: top + BOX_H + 3, class: `saga-undo${ran ? ' ran' : ''}`, 'marker-end': 'url(#arrow)' }));
      const tries = step.compensation.tries > 1 ? ` · try ${step.compensation.tries}` : '';
      g.append(s('text', { x: x + w / 2 + 6, y: top + BOX_H + 19, class: 'saga-kind' }, `${ran ? 'undone by' : 'undo'}${tries}`));
      box(g, x, cy, w, step.compensation, { dashed: !ran, title: tries ? `compensation, try ${step.compensation.tries} (the earlier tries never reached the provider)` : 'compensation' });
    }
  });
  return svg;
}
