// Lists a page at a time: from the API's cursors (effects, workflows, sagas) or from rows the
// console already holds (a long workflow's steps and events). Every row is reachable with the
// buttons or the keyboard; a page never grows with the list.
import { clear, h } from './dom.js';

function controls(testid) {
  const prev = h('button', { type: 'button', class: 'ghost-dark', 'data-testid': `${testid}-prev`, 'aria-label': 'previous page' }, '‹ Previous');
  const next = h('button', { type: 'button', class: 'ghost-dark', 'data-testid': `${testid}-next`, 'aria-label': 'next page' }, 'Next ›');
  const label = h('span', { class: 'pager-label muted', 'data-testid': `${testid}-label`, 'aria-live': 'polite' });
  const bar = h('nav', { class: 'pager', 'aria-label': 'pages' }, prev, label, next);
  return { prev, next, label, bar };
}

/**
 * Pages from the API: `load(cursor)` answers `{ rows, nextCursor, total, note }`; `render(rows)`
 * gives the page's nodes. Previous pages are re-read from the cursors that led to them.
 */
export function cursorPager({ testid, load, render, empty = 'Nothing matches.', size }) {
  const body = h('div', { class: 'pager-body', 'data-testid': testid });
  const c = controls(testid);
  const note = h('p', { class: 'hint', hidden: true });
  const cursors = [undefined];
  let index = 0;
  let busy = false;
  const show = async () => {
    busy = true;
    c.prev.disabled = c.next.disabled = true;
    try {
      const page = await load(cursors[index]);
      cursors.length = index + 1;
      if (page.nextCursor) cursors.push(page.nextCursor);
      const first = index * size + 1;
      const last = index * size + page.rows.length;
      c.label.textContent = page.rows.length
        ? `${first.toLocaleString('en-US')}–${last.toLocaleString('en-US')}${page.total !== undefined ? ` of ${page.total.toLocaleString('en-US')}` : page.nextCursor ? ' of more' : ''} · page ${index + 1}`
        : '';
      clear(body, page.rows.length ? render(page.rows) : h('p', { class: 'empty' }, empty));
      note.hidden = !page.note;
      note.textContent = page.note ?? '';
      c.prev.disabled = index === 0;
      c.next.disabled = !page.nextCursor;
      c.bar.hidden = index === 0 && !page.nextCursor;
    } catch (e) {
      clear(body, h('p', { class: 'error', role: 'alert' }, e.status ? `${e.status} ${e.code ?? ''}: ${e.message}` : e.message));
      c.prev.disabled = index === 0;
    } finally {
      busy = false;
    }
  };
  c.prev.addEventListener('click', () => { if (!busy && index > 0) { index--; show(); } });
  c.next.addEventListener('click', () => { if (!busy && cursors[index + 1]) { index++; show(); } });
  return { el: h('div', { class: 'paged' }, c.bar, body, note), ready: show(), reload: () => { index = 0; cursors.length = 1; return show(); } };
}

/**
 * Pages over rows held here. `render(rows, offset)` gives the page's nodes; `goTo(i)` shows the
 * page holding row i (e.g. the step the operator jumped to).
 */
export function arrayPager({ testid, rows: initial, size, render, empty = 'Nothing to show.' }) {
  let rows = initial;
  let page = 0;
  const body = h('div', { class: 'pager-body', 'data-testid': testid });
  const c = controls(testid);
  const first = h('button', { type: 'button', class: 'ghost-dark', 'data-testid': `${testid}-first`, 'aria-label': 'first page' }, '«');
  const last = h('button', { type: 'button', class: 'ghost-dark', 'data-testid': `${testid}-last`, 'aria-label': 'last page' }, '»');
  c.bar.prepend(first);
  c.bar.append(last);
  const pages = () => Math.max(1, Math.ceil(rows.length / size));
  const show = () => {
    page = Math.min(Math.max(0, page), pages() - 1);
    const from = page * size;
    const slice = rows.slice(from, from + size);
    clear(body, slice.length ? render(slice, from) : h('p', { class: 'empty' }, empty));
    c.label.textContent = rows.length ? `${(from + 1).toLocaleString('en-US')}–${(from + slice.length).toLocaleString('en-US')} of ${rows.length.toLocaleString('en-US')} · page ${page + 1} of ${pages()}` : '';
    first.disabled = c.prev.disabled = page === 0;
    last.disabled = c.next.disabled = page >= pages() - 1;
    c.bar.hidden = pages() === 1;
  };
  first.addEventListener('click', () => { page = 0; show(); });
  c.prev.addEventListener('click', () => { page--; show(); });
  c.next.addEventListener('click', () => { page++; show(); });
  last.addEventListener('click', () => { page = pages() - 1; show(); });
  show();
  return {
    el: h('div', { class: 'paged' }, c.bar, body),
    goTo(i) { page = Math.floor(i / size); show(); },
    /** New rows (a refresh): the page shown stays where it was. */
    update(next) { rows = next; show(); },
  };
}
