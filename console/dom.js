// Tiny DOM helpers: every piece of data reaches the page as text, never as HTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.setAttribute('class', value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'text') el.textContent = String(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** h('div', {class: 'x'}, 'text', h('span', {}, '…')) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** Empties `el`, then appends `children` (skipping null/undefined/false). */
export function clear(el, ...children) {
  while (el.firstChild) el.removeChild(el.firstChild);
  append(el, children);
  return el;
}

/** 850 ms · 2.4 s · 3m 12s · 1h 04m · 2d 3h */
export function duration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const sec = ms / 1000;
  if (sec < 60) return `${sec < 10 ? sec.toFixed(1) : Math.round(sec)} s`;
  const m = Math.floor(sec / 60);
  if (m < 60) return `${m}m ${String(Math.floor(sec % 60)).padStart(2, '0')}s`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return `${hr}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(hr / 24)}d ${hr % 24}h`;
}

export function ago(iso, now = Date.now()) {
  return `${duration(now - Date.parse(iso))} ago`;
}

/** The browser's time zone as a short name (`UTC`, `GMT+1`, `CEST`): every time the console shows carries it. */
export function zone(at = new Date()) {
  try {
    return new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ?? 'local time';
  } catch {
    return 'local time';
  }
}

/** 10:02:03.123 UTC — the local time of day, with its zone (`{ zone: false }` leaves it out, for a column that names it). */
export function clock(iso, { zone: withZone = true, ms = true } = {}) {
  const d = new Date(iso);
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${ms ? `.${pad(d.getMilliseconds(), 3)}` : ''}`;
  return withZone ? `${time} ${zone(d)}` : time;
}

/** 2026-12-02 10:02:03 UTC — a date and time with its zone (the full ISO instant is in the element's title). */
export function when(iso) {
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock(iso, { ms: false })}`;
}

/** A time as an element: its text with the zone, its title the exact instant in UTC. */
export function timeEl(iso, text = clock(iso), attrs = {}) {
  return h('time', { datetime: iso, title: new Date(iso).toISOString(), ...attrs }, text);
}

export const STATE_LABEL = {
  committed: 'committed',
  failed_before_effect: 'not done',
  terminal_failure: 'terminal',
  unknown: 'unknown',
  escalated: 'escalated',
  dispatching: 'in flight',
  declared: 'declared',
  held: 'held',
};

export function stateBadge(state, extra = {}) {
  return h('span', { class: `badge state-${state}`, ...extra }, STATE_LABEL[state] ?? state);
}

/** A committed step that a compensation undid (a saga's step whose undo committed): not green. */
export function undoneBadge(extra = {}) {
  return h('span', { class: 'badge state-undone', title: 'committed, then undone by its compensation', ...extra }, 'undone');
}

/** Text that may be long (ids, targets): shown whole where it fits, cut with an ellipsis by CSS, the whole of it in the title. */
export function name(text, cls = 'name', attrs = {}) {
  return h('span', { class: cls, title: String(text), ...attrs }, String(text));
}
