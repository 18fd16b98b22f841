// effectd operator console: sign in with a token, watch workflows, settle what only a human can.
import { api, ApiError, enc, session } from './api.js';
import { ago, clear, clock, duration, h, name, stateBadge, STATE_LABEL, timeEl, undoneBadge, when, zone } from './dom.js';
import { lanes, orderedEffects, stepName, undoneEffects } from './lanes.js';
import { closed, HUMAN, learnLifecycle, RELEASABLE, RESOLVABLE, STATES } from './lifecycle.js';
import { arrayPager, cursorPager } from './pager.js';
import { duplicateForm, releaseForm, resolveForm } from './forms.js';
import { sagaPicture } from './saga.js';
import { LEGEND } from './timeline.js';

const REFRESH_MS = 4_000;
const root = document.getElementById('app');
// The side lists show the newest this many; the pill and a line under the list give the real totals.
const QUEUE_LIMIT = 200;
const WORKFLOWS_LIMIT = 60;
// Pages of the lists and of a long workflow's tables: the page's height never grows with the list.
const LIST_PAGE = 50;
const STEPS_PAGE = 25;
const EVENTS_PAGE = 50;

let me;
let view;
let timer;
const ui = {};
let navigation = 0; // bumped by every route() and sign-in; only the newest may show its view
let queueShape; // what the queue cards were last built from; reset whenever the queue element is rebuilt

let resizing;
window.addEventListener('hashchange', () => me && route());
// `/` puts the cursor in the search box (unless one is typing somewhere already).
window.addEventListener('keydown', (ev) => {
  if (ev.key !== '/' || !ui.search || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  if (t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
  ev.preventDefault();
  ui.search.focus();
});
boot();

async function boot(error) {
  clearInterval(timer);
  me = undefined;
  view = undefined;
  navigation++; // a navigation still loading for the previous sign-in must not show its view
  if (!session.token) return signIn(error);
  try {
    // Who is signed in, and what each state means and allows (the sets of states come from effectd).
    const [who, meta] = await Promise.all([api('/v1/whoami'), api('/v1/meta')]);
    learnLifecycle(meta);
    me = who;
  } catch (e) {
    session.token = null;
    return signIn(e instanceof ApiError && e.status === 401 ? 'effectd did not accept that token (401): check it against credentials.json.' : `effectd is not answering: ${e.message}`);
  }
  consoleShell();
  await Promise.all([refreshLists(), route()]);
  timer = setInterval(tick, REFRESH_MS);
}

function signIn(error) {
  const input = h('input', { type: 'password', id: 'token', name: 'token', autocomplete: 'off', spellcheck: 'false', placeholder: 'efd_operator_…', 'data-testid': 'token-input', required: true });
  const form = h('form', { class: 'signin-card', 'data-testid': 'sign-in-form', onsubmit: (ev) => {
    ev.preventDefault();
    session.token = input.value.trim();
    boot();
  } },
  h('div', { class: 'brand big' }, h('span', { class: 'logo' }, '◆'), ' effectd'),
  h('h1', {}, 'Operator console'),
  h('p', { class: 'muted' }, 'Paste a bearer token from ', h('code', {}, '<data-dir>/credentials.json'), '. Operator tokens can resolve escalated effects; agent tokens can look at their own tenant. The token stays in this tab only (sessionStorage).'),
  h('label', { for: 'token' }, 'Token'),
  input,
  error ? h('p', { class: 'error', role: 'alert', 'data-testid': 'sign-in-error' }, error) : null,
  h('button', { type: 'submit', class: 'primary', 'data-testid': 'sign-in' }, 'Sign in'));
  clear(root, h('div', { class: 'signin' }, form));
  input.focus();
}

// Redraw the pictures when the main column changes width (window resize, a scrollbar appearing).
let mainWidth = 0;
const mainResized = new ResizeObserver(([entry]) => {
  const width = Math.round(entry.contentRect.width);
  if (Math.abs(width - mainWidth) < 4) return;
  mainWidth = width;
  clearTimeout(resizing);
  resizing = setTimeout(() => view?.redraw?.(), 100);
});

function consoleShell() {
  ui.counts = h('div', { class: 'counts', 'data-testid': 'counts' });
  ui.updated = h('span', { class: 'updated muted' });
  ui.queue = h('div', { class: 'queue', 'data-testid': 'queue' });
  queueShape = undefined;
  ui.queueCount = h('span', { class: 'pill' }, '0');
  ui.workflows = h('div', { class: 'workflows', 'data-testid': 'workflows' });
  ui.main = h('main', { class: 'main', 'data-testid': 'main' });
  mainResized.disconnect();
  mainResized.observe(ui.main);
  const who = `${me.name} · ${me.role}${me.tenant === '*' ? ' · all tenants' : ` · tenant ${me.tenant}`}`;
  ui.search = h('input', { type: 'search', id: 'search', name: 'q', autocomplete: 'off', spellcheck: 'false', placeholder: 'Search workflows, effect ids, tools, targets, receipts  ( / )', 'data-testid': 'search-input', 'aria-keyshortcuts': '/' });
  const searchForm = h('form', { class: 'search', role: 'search', 'data-testid': 'search-form', onsubmit: (ev) => {
    ev.preventDefault();
    const q = ui.search.value.trim();
    if (q) location.hash = `#/search/${enc(q)}`;
  } }, h('label', { for: 'search', class: 'sr-only' }, 'Search effects and workflows'), ui.search, h('button', { type: 'submit', class: 'ghost', 'data-testid': 'search-submit' }, 'Search'));
  ui.nav = h('nav', { class: 'views', 'aria-label': 'views' },
    h('a', { href: '#/', 'data-testid': 'nav-queue' }, 'Queue'),
    h('a', { href: '#/effects/attention', 'data-testid': 'nav-effects' }, 'Effects'),
    h('a', { href: '#/workflows', 'data-testid': 'nav-workflows' }, 'Workflows'),
    h('a', { href: '#/sagas', 'data-testid': 'nav-sagas' }, 'Sagas'));
  clear(root, 
    h('header', { class: 'topbar' },
      h('a', { class: 'brand', href: '#/' }, h('span', { class: 'logo' }, '◆'), ' effectd ', h('span', { class: 'sub' }, 'operator console')),
      ui.nav,
      searchForm,
      ui.counts,
      h('div', { class: 'who' }, ui.updated,
        h('span', { class: `role role-${me.role}`, 'data-testid': 'whoami' }, who),
        h('button', { class: 'ghost', 'data-testid': 'sign-out', onclick: () => { session.token = null; location.hash = ''; boot(); } }, 'Sign out'))),
    h('div', { class: 'layout' },
      h('aside', { class: 'side' },
        h('section', {}, h('h2', {}, 'Needs a human ', ui.queueCount), h('p', { class: 'hint' }, 'Escalated or terminal: effectd cannot tell whether these happened. Check the provider, then record what you found.'), ui.queue),
        h('section', {}, h('h2', {}, 'Recent workflows'), ui.workflows)),
      ui.main),
  );
}

async function tick() {
  if (document.hidden) return;
  await Promise.all([refreshLists(), view?.refresh?.()]).catch(() => {});
}

async function refreshLists() {
  try {
    const [attention, workflows] = await Promise.all([api(`/v1/effects?state=attention&limit=${QUEUE_LIMIT}`), api(`/v1/workflows?limit=${WORKFLOWS_LIMIT}`)]);
    const counts = workflows.effects ?? {};
    const human = workflows.needHuman ?? [...HUMAN].reduce((n, state) => n + (counts[state] ?? 0), 0);
    renderQueue(attention.effects, Math.max(attention.effects.length, human));
    renderWorkflows(workflows.workflows, workflows.total ?? workflows.workflows.length);
    renderCounts(counts, human);
    ui.updated.textContent = `updated ${clock(new Date().toISOString(), { ms: false })}`;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return boot('Your token is no longer accepted (401).');
    ui.updated.textContent = `update failed: ${e.message}`;
  }
}

/** `human`: escalated, terminal once effectd has nothing left to try, and duplicates nobody dealt with (the queue's own count). */
function renderCounts(effects, human) {
  const chip = (label, n, cls) => h('span', { class: `count ${cls}${n ? '' : ' zero'}` }, h('b', {}, String(n)), ` ${label}`);
  clear(ui.counts, 
    chip('need a human', human, 'c-human'),
    chip('unknown', (effects.unknown ?? 0), 'c-unknown'),
    chip('in flight', (effects.dispatching ?? 0) + (effects.declared ?? 0), 'c-flight'),
    chip('held', effects.held ?? 0, 'c-held'),
    chip('committed', effects.committed ?? 0, 'c-committed'),
    chip('not done', effects.failed_before_effect ?? 0, 'c-notdone'),
  );
}

// Cards are rebuilt only when the queue itself changes: a rebuild under the pointer could turn a
// click on one card into a click on whichever card took its place.
function renderQueue(effects, total) {
  ui.queueCount.textContent = String(total);
  ui.queueCount.className = `pill${total ? ' alert' : ''}`;
  const now = Date.now();
  const selected = currentEffectId();
  const waited = (e) => (e.unknownSince ? duration(now - Date.parse(e.unknownSince)) : undefined);
  const shape = `${total}\n${effects.map((e) => `${e.effectId} ${e.state} ${e.reason ?? ''}`).join('\n')}`;
  if (shape === queueShape) {
    for (const card of ui.queue.querySelectorAll('[data-testid="queue-item"]')) {
      const e = effects.find((x) => x.effectId === card.dataset.effectId);
      card.classList.toggle('selected', selected === card.dataset.effectId);
      const age = card.querySelector('.age');
      if (e && age) age.textContent = `waiting ${waited(e)}`;
    }
    return;
  }
  queueShape = shape;
  clear(ui.queue);
  if (!effects.length) ui.queue.append(h('p', { class: 'empty' }, 'Nothing is waiting for a human.'));
  for (const e of effects) {
    const age = waited(e);
    ui.queue.append(h('a', { class: `card${selected === e.effectId ? ' selected' : ''}`, href: `#/effect/${enc(e.effectId)}`, 'data-testid': 'queue-item', dataset: { effectId: e.effectId } },
      h('div', { class: 'card-top' }, stateBadge(e.state), name(e.tool, 'tool'), age ? h('span', { class: 'age', title: `unknown since ${when(e.unknownSince)}` }, `waiting ${age}`) : null),
      h('div', { class: 'target' }, e.target),
      name(`${e.workflowId} · step ${e.step}${e.tenant !== 'default' ? ` · ${e.tenant}` : ''}`, 'meta'),
      e.duplicates ? h('div', { class: 'reason', 'data-testid': 'queue-duplicate' }, `duplicate at the provider: ${e.duplicates.receipts.join(', ')}`) : e.reason ? h('div', { class: 'reason' }, e.reason) : null));
  }
  if (total > effects.length) ui.queue.append(more(`the newest ${effects.length} of ${total}; all of them, a page at a time: `, '#/effects/attention', 'Effects that need a human'));
}

function more(text, href, label) {
  return h('p', { class: 'hint', 'data-testid': 'list-more' }, `Showing ${text}`, h('a', { href }, label));
}

function renderWorkflows(rows, total) {
  const current = location.hash;
  clear(ui.workflows);
  if (!rows.length) ui.workflows.append(h('p', { class: 'empty' }, 'No workflows yet. Submit an effect (POST /v1/effects) and it shows up here.'));
  for (const w of rows) {
    const href = `#/workflow/${enc(w.tenant)}/${enc(w.workflowId)}`;
    const dots = h('span', { class: 'dots' }, ...Object.entries(w.states).flatMap(([state, n]) => Array.from({ length: Math.min(n, 8) }, () => h('i', { class: `dot state-${state}`, title: `${n} ${STATE_LABEL[state] ?? state}` }))));
    ui.workflows.append(h('a', { class: `row${current === href ? ' selected' : ''}${w.needsOperator ? ' needs' : ''}`, href, 'data-testid': 'workflow-row', dataset: { workflowId: w.workflowId } },
      name(w.workflowId, 'wf-id'),
      dots,
      h('span', { class: 'when muted' }, ago(w.lastEventAt))));
  }
  if (total > rows.length) ui.workflows.append(more(`the ${rows.length} most recently active of ${total}; all of them, a page at a time: `, '#/workflows', 'Workflows'));
}

function currentEffectId() {
  const m = /^#\/effect\/(.+)$/.exec(location.hash);
  return m ? decodeURIComponent(m[1]) : undefined;
}

// Views load before they show; only the newest navigation may show its view, so a slow earlier
// one (e.g. the overview still loading when the operator clicks a queued effect) cannot replace it.
async function route() {
  const mine = ++navigation;
  const hash = location.hash;
  const effect = /^#\/effect\/(.+)$/.exec(hash);
  const workflow = /^#\/workflow\/([^/]+)\/(.+)$/.exec(hash);
  const search = /^#\/search\/(.*)$/.exec(hash);
  const effects = /^#\/effects(?:\/([^/]*))?$/.exec(hash);
  let next;
  try {
    if (effect) next = await effectView(decodeURIComponent(effect[1]));
    else if (workflow) next = await workflowView(decodeURIComponent(workflow[1]), decodeURIComponent(workflow[2]));
    else if (search) next = await searchView(decodeURIComponent(search[1]));
    else if (effects) next = await effectsView(decodeURIComponent(effects[1] || 'attention'));
    else if (hash === '#/workflows') next = await workflowsView();
    else if (hash === '#/sagas') next = await sagasView();
    else next = await overview();
  } catch (e) {
    next = { nodes: [h('div', { class: 'panel' }, h('p', { class: 'error', role: 'alert' }, e instanceof ApiError ? `${e.status} ${e.code ?? ''}: ${e.message}` : e.message))] };
  }
  if (mine !== navigation) return;
  view = next;
  clear(ui.main, ...next.nodes);
  for (const el of document.querySelectorAll('.card, .row')) el.classList.toggle('selected', el.getAttribute('href') === hash);
  for (const a of ui.nav.querySelectorAll('a')) {
    const here = a.getAttribute('href') === '#/' ? !effect && !workflow && !search && !effects && !['#/workflows', '#/sagas'].includes(hash) : hash.startsWith(a.getAttribute('href').replace(/\/attention$/, ''));
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (search) ui.search.value = decodeURIComponent(search[1]);
  else if (document.activeElement !== ui.search) ui.search.value = '';
}

async function overview() {
  const [{ effects }, { workflows }] = await Promise.all([api('/v1/effects?state=attention&limit=1'), api('/v1/workflows?limit=1')]);
  if (effects[0]) return effectView(effects[0].effectId);
  if (workflows[0]) return workflowView(workflows[0].tenant, workflows[0].workflowId);
  return { nodes: [h('div', { class: 'panel empty-state' }, h('h1', {}, 'Nothing recorded yet'), h('p', { class: 'muted' }, 'Every intent, attempt, check and outcome effectd records shows up here as a timeline.'))] };
}

// ---------------------------------------------------------------- a workflow

async function workflowView(tenant, workflowId, selected) {
  const table = h('div', { class: 'events' });
  const steps = h('div', { class: 'steps' });
  const header = h('div', { class: 'view-head' });
  const sagaBox = h('div', { class: 'panel', hidden: true, 'data-testid': 'saga' });
  const timeline = lanes({ scale: 'auto', selected, width: pictureWidth, onSelect: (id) => { location.hash = `#/effect/${enc(id)}`; } });
  const scaleButtons = ['auto', 'linear', 'log'].map((k) => h('button', { type: 'button', class: `seg${k === 'auto' ? ' on' : ''}`, 'aria-pressed': String(k === 'auto'), onclick: () => {
    for (const b of scaleButtons) { b.classList.toggle('on', b.textContent === k); b.setAttribute('aria-pressed', String(b.textContent === k)); }
    timeline.setScale(k);
  } }, k));
  let data;
  let stepPager;
  let eventPager;
  const load = async () => {
    data = await api(`/v1/workflows/${enc(workflowId)}?tenant=${enc(tenant)}`);
    const undone = undoneEffects(data);
    const states = {};
    for (const e of data.effects) {
      const key = undone.has(e.effectId) ? 'undone' : e.state;
      states[key] = (states[key] ?? 0) + 1;
    }
    const t0 = Date.parse(data.timeline[0].at);
    const tn = Date.parse(data.timeline[data.timeline.length - 1].at);
    clear(header,
      h('div', { class: 'min0' }, h('div', { class: 'crumb muted' }, `workflow · tenant ${data.tenant}`), h('h1', { 'data-testid': 'workflow-title', class: 'wrap' }, data.workflowId)),
      h('div', { class: 'facts inline' },
        fact('effects', String(data.effects.length), { 'data-testid': 'workflow-effects' }),
        fact('events', String(data.timeline.length)),
        fact('span', duration(tn - t0)),
        fact('started', timeEl(data.timeline[0].at, when(data.timeline[0].at))),
        fact('last event', timeEl(data.timeline[data.timeline.length - 1].at, ago(data.timeline[data.timeline.length - 1].at))),
        h('div', { class: 'state-row' }, ...Object.entries(states).map(([st, n]) => h('span', {}, st === 'undone' ? undoneBadge() : stateBadge(st), ` ${n}`)))));
    timeline.update(data);
    renderSaga(sagaBox, data.saga);
    const ordered = orderedEffects(data);
    if (stepPager) stepPager.update(ordered);
    else {
      stepPager = arrayPager({ testid: 'steps', rows: ordered, size: STEPS_PAGE, render: (rows) => stepsTable(rows, undoneEffects(data), selected) });
      clear(steps, stepPager.el);
    }
    if (eventPager) eventPager.update(data.timeline);
    else {
      eventPager = arrayPager({ testid: 'events-pager', rows: data.timeline, size: EVENTS_PAGE, render: (rows) => eventsTable(data, rows, selected) });
      clear(table, eventPager.el);
    }
  };
  await load();
  const nodes = [
    h('div', { class: 'panel' }, header),
    sagaBox,
    h('div', { class: 'panel' },
      h('div', { class: 'panel-head' }, h('h2', {}, 'Timeline'), h('div', { class: 'segmented', role: 'group', 'aria-label': 'time axis' }, ...scaleButtons)),
      timeline.el,
      legend()),
    h('div', { class: 'panel' }, h('h2', {}, 'Steps'), steps),
    h('div', { class: 'panel' }, h('h2', {}, `Every event, in ledger order (times in ${zone()})`), table)];
  return { nodes, redraw: () => timeline.redraw(), refresh: async () => { if (data.effects.some((e) => !closed(e.state))) await load(); } };
}

/** The picture is drawn at the main column's real width, so its text stays at its CSS size. */
function pictureWidth() {
  return ui.main.clientWidth - 34;
}

function renderSaga(box, saga) {
  box.hidden = !saga;
  if (!saga) return;
  clear(box,
    h('div', { class: 'panel-head' }, h('h2', {}, `Saga ${saga.saga} `, sagaBadge(saga.status, { 'data-testid': 'saga-status' })), saga.why ? h('span', { class: 'muted small' }, saga.why) : null),
    h('div', { class: 'picture' }, sagaPicture(saga, pictureWidth())));
}

function sagaBadge(status, extra = {}) {
  const tone = { completed: 'state-committed', compensated: 'state-undone', compensation_failed: 'state-terminal_failure', paused: 'state-unknown', compensating: 'state-escalated', running: 'state-dispatching' }[status] ?? 'state-declared';
  return h('span', { class: `badge ${tone}`, ...extra }, status);
}

function legend() {
  return h('div', { class: 'legend' }, ...LEGEND.map(([cls, label]) => h('span', {}, h('i', { class: `key key-${cls}` }), label)));
}

/** One page of a workflow's effects: every step reachable by paging, each a link to its effect. */
function stepsTable(rows, undone, selected) {
  return h('table', { class: 'list-table', 'data-testid': 'steps-table' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'step'), h('th', { scope: 'col' }, 'state'), h('th', { scope: 'col' }, 'tool'), h('th', { scope: 'col' }, 'target'), h('th', { scope: 'col' }, 'attempts'), h('th', { scope: 'col' }, 'receipt'))),
    h('tbody', {}, ...rows.map((e) => h('tr', { class: selected === e.effectId ? 'hl' : '', 'data-testid': 'step-row', dataset: { step: String(e.step), effectId: e.effectId } },
      h('td', {}, h('a', { href: `#/effect/${enc(e.effectId)}` }, stepName(e))),
      h('td', {}, undone.has(e.effectId) ? undoneBadge() : stateBadge(e.state)),
      h('td', {}, name(e.tool, 'mono')),
      h('td', { class: 'cell-wrap' }, e.target),
      h('td', {}, String(e.attempts)),
      h('td', {}, e.receipt ? h('code', { class: 'receipt' }, e.receipt) : h('span', { class: 'muted' }, '—'))))));
}

function eventsTable(data, rows, selected) {
  const t0 = Date.parse(data.timeline[0].at);
  const byId = new Map(data.effects.map((e) => [e.effectId, e]));
  return h('table', { class: 'event-table', 'data-testid': 'events' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, `time (${zone()})`), h('th', { scope: 'col' }, '+'), h('th', { scope: 'col' }, 'effect'), h('th', { scope: 'col' }, 'event'), h('th', { scope: 'col' }, 'what happened'))),
    h('tbody', {}, ...rows.map((row) => {
      const effect = row.effectId ? byId.get(row.effectId) : undefined;
      const receipt = row.event?.receipt;
      return h('tr', { class: selected && row.effectId === selected ? 'hl' : '' },
        h('td', { class: 'mono' }, timeEl(row.at)),
        h('td', { class: 'mono muted' }, `+${duration(Date.parse(row.at) - t0)}`),
        h('td', {}, effect ? h('a', { href: `#/effect/${enc(effect.effectId)}`, title: `${effect.tool} for ${effect.target}` }, `${stepName(effect)} ${effect.tool}`) : h('span', { class: 'muted' }, 'workflow')),
        h('td', {}, h('span', { class: `etype etype-${row.type}` }, row.type)),
        h('td', {}, row.summary, receipt ? h('code', { class: 'receipt' }, receipt) : null));
    })));
}

function fact(label, value, extra = {}) {
  return h('div', { class: 'fact' }, h('div', { class: 'fact-label' }, label), h('div', { class: 'fact-value', ...extra }, value));
}

// ---------------------------------------------------------------- one effect

async function effectView(effectId) {
  const head = h('div', { class: 'view-head' });
  const facts = h('div', { class: 'facts' });
  const timeline = lanes({ scale: 'auto', selected: effectId, width: pictureWidth, onSelect: (id) => { location.hash = `#/effect/${enc(id)}`; } });
  const evidence = h('ol', { class: 'evidence', 'data-testid': 'evidence' });
  const actions = h('div', { class: 'actions' });
  let effect;
  let workflow;
  let formShownFor;

  const load = async () => {
    effect = await api(`/v1/effects/${enc(effectId)}`);
    workflow = await api(`/v1/workflows/${enc(effect.workflowId)}?tenant=${enc(effect.tenant)}`);
    const now = Date.now();
    clear(head, 
      h('div', {}, h('div', { class: 'crumb' }, h('a', { href: `#/workflow/${enc(effect.tenant)}/${enc(effect.workflowId)}` }, `workflow ${effect.workflowId}`), ` · step ${effect.step} · slot ${effect.slot}`),
        h('h1', { class: 'wrap' }, h('span', { class: 'tool' }, effect.tool), ' for ', effect.target)),
      h('div', { class: 'big-state', 'data-testid': 'effect-state', dataset: { state: effect.state, effectId: effect.effectId } }, stateBadge(effect.state), undoneEffects(workflow).has(effect.effectId) ? undoneBadge({ 'data-testid': 'effect-undone' }) : null, h('span', { class: 'agent-status' }, `agent sees: ${effect.status}`)));
    const since = effect.unknownSince ? Date.parse(effect.unknownSince) : undefined;
    const settled = closed(effect.state);
    const lastAt = Date.parse(effect.evidence[effect.evidence.length - 1].at);
    clear(facts, 
      fact('effect id', effect.effectId, { class: 'fact-value mono' }),
      fact('declared by', effect.declaredBy, { 'data-testid': 'declared-by' }),
      effect.onBehalfOf ? fact('on behalf of', `${effect.onBehalfOf} (claimed by the command, not authenticated)`, { 'data-testid': 'on-behalf-of' }) : null,
      fact('attempts', String(effect.attempts)),
      fact('receipt', effect.receipt ?? '—', { class: 'fact-value mono', 'data-testid': 'receipt-value' }),
      since !== undefined ? fact(settled ? 'was unknown for' : 'unknown for', duration((settled ? lastAt : now) - since), { class: `fact-value${settled ? '' : ' warn-text'}`, 'data-testid': 'unknown-for' }) : null,
      effect.resolvedBy ? fact('resolved by', effect.resolvedBy, { 'data-testid': 'resolved-by' }) : null,
      effect.reason ? h('div', { class: `callout${HUMAN.has(effect.state) ? ' warn' : ''}` }, h('b', {}, 'Why: '), effect.reason) : null,
      h('details', { class: 'args' }, h('summary', {}, 'arguments (canonical)'), h('pre', {}, JSON.stringify(effect.args, null, 2))));
    timeline.update(workflow);
    clear(evidence, ...effect.evidence.map((e) => h('li', {},
      h('span', { class: 'mono muted' }, timeEl(e.at)),
      h('span', { class: `etype etype-${e.type}` }, e.type),
      h('span', {}, e.summary))));
    const pending = effect.duplicates?.unhandled ?? [];
    const wantsOperator = pending.length ? 'duplicate' : RESOLVABLE.has(effect.state) ? 'resolve' : RELEASABLE.has(effect.state) ? 'release' : undefined;
    if (wantsOperator && me.role !== 'operator') {
      // Only operators may resolve, release or deal with a duplicate: others are told so, not offered a form effectd refuses.
      if (formShownFor !== `readonly:${wantsOperator}`) {
        formShownFor = `readonly:${wantsOperator}`;
        clear(actions, h('div', { class: 'callout', 'data-testid': 'operator-only' },
          h('b', {}, { resolve: 'Waiting for an operator to resolve it. ', release: 'Held: an operator may release it. ', duplicate: 'A duplicate at the provider: an operator deals with it. ' }[wantsOperator]),
          `You are signed in as ${me.name}, an ${me.role} credential: only operator credentials may ${wantsOperator === 'duplicate' ? 'undo or keep an extra object' : wantsOperator} (effectd refuses it otherwise). An operator can do it here or with `,
          h('code', {}, wantsOperator === 'resolve' ? `effectd resolve ${effect.effectId} --committed|--not-committed --reason "…"` : 'effectd effects --state attention'), '.'));
      }
    } else if (pending.length) {
      const key = `duplicates:${pending.join(',')}`;
      if (formShownFor !== key) {
        formShownFor = key;
        clear(actions, duplicateForm(me.name, effect, pending[0], async () => { await load(); await refreshLists(); }));
      }
    } else if (RESOLVABLE.has(effect.state)) {
      if (formShownFor !== effect.effectId) {
        formShownFor = effect.effectId;
        clear(actions, resolveForm(me.name, effect, async () => { await load(); await refreshLists(); }));
      }
    } else if (RELEASABLE.has(effect.state)) {
      if (formShownFor !== 'held') {
        formShownFor = 'held';
        clear(actions, releaseForm(me.name, effect, async () => { await load(); await refreshLists(); }));
      }
    } else if (formShownFor !== 'settled') {
      formShownFor = 'settled';
      const done = h('div', { class: 'settled', 'data-testid': 'settled' }, h('b', {}, STATE_LABEL[effect.state] ?? effect.state), effect.resolvedBy ? ` — resolved by ${effect.resolvedBy}` : '', effect.receipt ? h('span', {}, ' · receipt ', h('code', {}, effect.receipt)) : null);
      // A detected duplicate whose extra objects are all dealt with: what was recorded stays in view
      // (the form's confirmation would vanish with the form as the view reloads).
      const handled = Object.entries(effect.duplicates?.handled ?? {}).map(([receipt, d]) => h('p', { class: 'ok', role: 'status', 'data-testid': 'duplicate-ok' },
        `Recorded: ${receipt} ${d.action} by ${d.by}${d.compensationEffectId ? ` (undo ${d.compensationEffectId})` : ''}: ${d.reason}`));
      clear(actions, done, ...handled);
    }
  };
  await load();
  const nodes = [
    h('div', { class: 'panel' }, head, facts),
    h('div', { class: 'panel' }, h('h2', {}, 'Its workflow'), timeline.el, legend()),
    h('div', { class: 'panel', 'data-testid': 'resolve-panel' }, actions),
    h('div', { class: 'panel' }, h('h2', {}, `Evidence — everything the ledger knows about this effect (times in ${zone()})`), evidence)];
  return { nodes, redraw: () => timeline.redraw(), refresh: async () => { if (!closed(effect.state)) await load(); } };
}

// ---------------------------------------------------------------- lists and search

/** A page of effects as a table: state, what, where, and a link to each. */
function effectRows(effects) {
  return h('table', { class: 'list-table', 'data-testid': 'effect-table' },
    h('thead', {}, h('tr', {}, ...['state', 'tool', 'target', 'workflow', 'step', 'receipt / why'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...effects.map((e) => h('tr', { 'data-testid': 'effect-row', dataset: { effectId: e.effectId, state: e.state } },
      h('td', {}, h('a', { href: `#/effect/${enc(e.effectId)}`, 'aria-label': `effect ${e.effectId}: ${e.tool} for ${e.target}, ${STATE_LABEL[e.state] ?? e.state}` }, stateBadge(e.state))),
      h('td', {}, h('a', { href: `#/effect/${enc(e.effectId)}`, class: 'mono', title: e.effectId }, e.tool)),
      h('td', { class: 'cell-wrap' }, e.target),
      h('td', {}, h('a', { href: `#/workflow/${enc(e.tenant)}/${enc(e.workflowId)}`, class: 'cell-wrap mono' }, e.workflowId), e.tenant !== 'default' ? h('span', { class: 'muted' }, ` · ${e.tenant}`) : null),
      h('td', {}, String(e.step)),
      h('td', { class: 'cell-wrap small' }, e.receipt ? h('code', { class: 'receipt' }, e.receipt) : e.reason ?? e.message ?? '')))));
}

/** A page of workflows as a table (saga runs with their saga and status). */
function workflowRows(workflows, { sagas = false } = {}) {
  const head = sagas ? ['saga', 'status', 'workflow', 'effects', 'last event'] : ['workflow', 'effects', 'tools', 'last event'];
  return h('table', { class: 'list-table', 'data-testid': sagas ? 'saga-table' : 'workflow-table' },
    h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...workflows.map((w) => {
      const href = `#/workflow/${enc(w.tenant)}/${enc(w.workflowId)}`;
      const states = h('span', { class: 'state-row small' }, ...Object.entries(w.states).map(([st, n]) => h('span', {}, stateBadge(st), ` ${n}`)));
      const id = h('td', {}, h('a', { href, class: 'cell-wrap mono' }, w.workflowId), w.tenant !== 'default' ? h('span', { class: 'muted' }, ` · ${w.tenant}`) : null, w.needsOperator ? h('span', { class: 'needs-dot', title: 'an effect needs a human' }, ' ●') : null);
      const last = h('td', { class: 'nowrap' }, timeEl(w.lastEventAt, when(w.lastEventAt)));
      return sagas
        ? h('tr', { 'data-testid': 'saga-row', dataset: { workflowId: w.workflowId, status: w.sagaStatus ?? '' } }, h('td', {}, h('a', { href }, w.saga)), h('td', {}, w.sagaStatus ? sagaBadge(w.sagaStatus) : '—', w.sagaWhy ? h('div', { class: 'small muted cell-wrap' }, w.sagaWhy) : null), id, h('td', {}, states), last)
        : h('tr', { 'data-testid': 'workflow-list-row', dataset: { workflowId: w.workflowId } }, id, h('td', {}, states), h('td', { class: 'small mono cell-wrap' }, w.tools.join(', ')), last);
    })));
}

function listPanel(title, intro, pager, extra) {
  return h('div', { class: 'panel' }, h('div', { class: 'panel-head' }, h('h1', {}, title), extra ?? null), intro ? h('p', { class: 'hint' }, intro) : null, pager.el);
}

/** Effects by state (the lifecycle's states, and `attention`: what needs a human), a page at a time. */
async function effectsView(state) {
  const states = ['attention', ...STATES, 'all'];
  const labelOf = (st) => (st === 'attention' ? 'need a human' : st === 'all' ? 'every state' : STATE_LABEL[st] ?? st);
  const tabs = h('nav', { class: 'tabs', 'aria-label': 'effects by state', 'data-testid': 'state-tabs' }, ...states.map((st) => h('a', { href: `#/effects/${enc(st)}`, 'data-testid': `state-tab-${st}`, ...(st === state ? { 'aria-current': 'page' } : {}) }, labelOf(st))));
  const query = state === 'all' ? '' : `state=${enc(state)}&`;
  const pager = cursorPager({ testid: 'effects-list', size: LIST_PAGE, empty: `No effect is ${labelOf(state)} now.`, render: effectRows,
    load: async (cursor) => {
      const page = await api(`/v1/effects?${query}limit=${LIST_PAGE}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
      return { rows: page.effects, nextCursor: page.nextCursor, note: page.window ? `Settled states are listed from ${page.window}.` : undefined };
    } });
  await pager.ready;
  return { nodes: [h('div', { class: 'panel' }, h('h1', {}, `Effects: ${labelOf(state)}`), tabs, h('p', { class: 'hint' }, 'Most recently active first. Open states (in flight, unknown, escalated, held, …) are listed completely.'), pager.el)] };
}

/** Every workflow the caller may see, a page at a time; `attention` only those waiting for a human. */
async function workflowsView() {
  let attention = false;
  const toggle = h('input', { type: 'checkbox', id: 'wf-attention', 'data-testid': 'workflows-attention', onchange: () => { attention = toggle.checked; pager.reload(); } });
  const pager = cursorPager({ testid: 'workflows-list', size: LIST_PAGE, render: (rows) => workflowRows(rows),
    load: async (cursor) => {
      const page = await api(`/v1/workflows?limit=${LIST_PAGE}${attention ? '&attention=1' : ''}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
      return { rows: page.workflows, nextCursor: page.nextCursor, total: page.total };
    } });
  await pager.ready;
  return { nodes: [listPanel('Workflows', 'Most recently active first: every workflow with an open effect, and those among the recently active effects.', pager, h('label', { class: 'inline-field', for: 'wf-attention' }, toggle, ' only those waiting for a human'))] };
}

/** Saga runs with their status, a page at a time, and the sagas this effectd runs. */
async function sagasView() {
  const pager = cursorPager({ testid: 'sagas-list', size: LIST_PAGE, empty: 'No saga has run yet (POST /v1/sagas starts one).', render: (rows) => workflowRows(rows, { sagas: true }),
    load: async (cursor) => {
      const page = await api(`/v1/workflows?saga=1&limit=${LIST_PAGE}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
      return { rows: page.workflows, nextCursor: page.nextCursor, total: page.total };
    } });
  const [defs] = await Promise.all([api('/v1/sagas').catch(() => undefined), pager.ready]);
  const defined = defs ? h('div', { class: 'panel' }, h('h2', {}, 'Sagas this effectd runs'),
    h('ul', { class: 'plain', 'data-testid': 'saga-definitions' }, ...defs.sagas.map((d) => h('li', {}, h('b', {}, d.name), ` v${d.version}: `, d.steps.map((st) => `${st.name}${st.compensation ? ` (undo ${st.compensation})` : ''}`).join(' → ')))),
    defs.unavailable.length ? h('p', { class: 'hint' }, 'Set aside: ', defs.unavailable.map((u) => `${u.name} (${u.why})`).join('; ')) : null) : null;
  return { nodes: [listPanel('Saga runs', 'Most recently active first, each with its status (a compensated saga undid its committed steps).', pager), defined] };
}

/**
 * Search: the effect and the workflow whose id is exactly the text (found even outside the recent
 * window), then every effect and workflow whose id, tool, target or receipt contains it.
 */
async function searchView(q) {
  const exact = [];
  const [effect, workflow] = await Promise.all([
    api(`/v1/effects/${enc(q)}`).catch(() => undefined),
    /^[A-Za-z0-9._:@-]+$/.test(q) && q !== '.' && q !== '..' ? api(`/v1/workflows/${enc(q)}`).catch(() => undefined) : undefined,
  ]);
  if (effect?.effectId) exact.push(h('li', { 'data-testid': 'search-exact-effect' }, 'Effect ', h('a', { href: `#/effect/${enc(effect.effectId)}`, class: 'mono wrap' }, effect.effectId), ` — ${effect.tool} for ${effect.target}, `, stateBadge(effect.state)));
  if (workflow?.workflowId) exact.push(h('li', { 'data-testid': 'search-exact-workflow' }, 'Workflow ', h('a', { href: `#/workflow/${enc(workflow.tenant)}/${enc(workflow.workflowId)}`, class: 'mono wrap' }, workflow.workflowId), ` — ${workflow.effects.length} effect(s)`));
  const effects = cursorPager({ testid: 'search-effects', size: LIST_PAGE, empty: 'No effect matches.', render: effectRows,
    load: async (cursor) => {
      const page = await api(`/v1/effects?q=${enc(q)}&limit=${LIST_PAGE}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
      return { rows: page.effects, nextCursor: page.nextCursor };
    } });
  const workflows = cursorPager({ testid: 'search-workflows', size: LIST_PAGE, empty: 'No workflow matches.', render: (rows) => workflowRows(rows),
    load: async (cursor) => {
      const page = await api(`/v1/workflows?q=${enc(q)}&limit=${LIST_PAGE}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
      return { rows: page.workflows, nextCursor: page.nextCursor, total: page.total };
    } });
  await Promise.all([effects.ready, workflows.ready]);
  return { nodes: [
    h('div', { class: 'panel', 'data-testid': 'search-results' }, h('h1', { class: 'wrap' }, 'Search: ', h('q', {}, q)),
      h('p', { class: 'hint' }, 'Effect ids (the reference effectd stamps at the provider), workflow ids, tools, targets and receipts that contain the text, ignoring case. Open effects are searched completely, settled ones among the recently active; an exact effect or workflow id is found however old.'),
      exact.length ? h('ul', { class: 'plain exact' }, ...exact) : null),
    h('div', { class: 'panel' }, h('h2', {}, 'Effects'), effects.el),
    h('div', { class: 'panel' }, h('h2', {}, 'Workflows'), workflows.el)] };
}
