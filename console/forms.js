// The operator's forms: settle an escalated effect, release a held step, deal with a duplicate.
// Each records with the operator's name; nothing is chosen for them, and a reason is required.
import { api, ApiError, enc } from './api.js';
import { h, STATE_LABEL } from './dom.js';

// One submit path for the operator forms: the button is busy while effectd answers; an error
// (403 for an agent credential, 409 for a state that moved on) is shown, never swallowed.
function operatorForm({ testid, title, hint, fields, submitLabel, send, done }, after) {
  const error = h('p', { class: 'error', role: 'alert', 'data-testid': `${testid}-error`, hidden: true });
  const ok = h('p', { class: 'ok', role: 'status', 'data-testid': `${testid}-ok`, hidden: true });
  const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': `${testid}-submit` }, submitLabel);
  return h('form', { class: 'resolve', 'data-testid': `${testid}-form`, onsubmit: async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    ok.hidden = true;
    submit.disabled = true;
    try {
      ok.textContent = done(await send());
      ok.hidden = false;
      await after();
    } catch (e) {
      error.textContent = e instanceof ApiError ? `${e.status} ${e.code ?? ''} — ${e.message}` : e.message;
      error.hidden = false;
    } finally {
      submit.disabled = false;
    }
  } },
  h('h2', {}, title),
  hint,
  ...fields,
  h('div', { class: 'form-foot' }, submit, error, ok));
}

/**
 * A detected duplicate: the provider holds more objects than the one effect asked for. One extra
 * object at a time: undo it with the tool's declared undo (an effect of its own), or keep it, with a reason.
 */
export function duplicateForm(operator, effect, receipt, after) {
  const reason = h('textarea', { name: 'reason', rows: 2, placeholder: 'what you checked — kept in the ledger with your name', 'data-testid': 'duplicate-reason', required: true });
  const undo = effect.duplicates.undoTool;
  const compensate = h('input', { type: 'radio', name: 'action', value: 'compensate', required: true, disabled: !undo, 'data-testid': 'duplicate-compensate' });
  const keep = h('input', { type: 'radio', name: 'action', value: 'keep', required: true, 'data-testid': 'duplicate-keep' });
  return operatorForm({
    testid: 'duplicate',
    title: 'Duplicate at the provider',
    hint: h('p', { class: 'callout warn', 'data-testid': 'duplicate-callout' },
      `The provider holds ${effect.duplicates.receipts.length} objects for this one effect: `, ...effect.duplicates.receipts.flatMap((r, i) => [i ? ', ' : '', h('code', {}, r), r === effect.duplicates.own ? ' (the one effectd recorded)' : '']),
      '. It forgot the idempotency key sooner than its contract says, and a resend acted again. Deal with the extra object ', h('code', {}, receipt), '.'),
    fields: [
      h('div', { class: 'choice' },
        h('label', { class: 'option' }, compensate, h('span', {}, h('b', {}, 'Undo it'), undo ? ` — ${undo} for ${receipt} (an effect of its own, sent once)` : ' — this tool declares no undo')),
        h('label', { class: 'option' }, keep, h('span', {}, h('b', {}, 'Keep it'), ' — both stay (say why)'))),
      h('label', { class: 'field' }, h('span', {}, 'Reason'), reason),
    ],
    submitLabel: `Record as ${operator}`,
    send: () => api(`/v1/effects/${enc(effect.effectId)}/duplicates/${enc(receipt)}`, { method: 'POST', body: { action: compensate.checked ? 'compensate' : 'keep', reason: reason.value.trim() } }),
    done: (handled) => `Recorded: ${receipt} ${handled.duplicates?.handled?.[receipt]?.action ?? 'handled'}.`,
  }, after);
}

/** A held step (it repeats an effect that happened or may have) goes out only if an operator says it is a separate effect. */
export function releaseForm(operator, effect, after) {
  const reason = h('textarea', { name: 'reason', rows: 2, placeholder: 'why this is a separate effect and not a repeat — kept in the ledger with your name', 'data-testid': 'release-reason', required: true });
  return operatorForm({
    testid: 'release',
    title: 'Release',
    hint: h('p', { class: 'hint' }, effect.message ?? 'Held: it repeats another effect of this workflow.', ' Release it only if it is really another effect (a second charge the customer asked for, say): effectd then sends it with its own key.'),
    fields: [h('label', { class: 'field' }, h('span', {}, 'Reason'), reason)],
    submitLabel: `Release as ${operator}`,
    send: () => api(`/v1/effects/${enc(effect.effectId)}/release`, { method: 'POST', body: { reason: reason.value.trim() } }),
    done: (released) => `Released: ${STATE_LABEL[released.state] ?? released.state}.`,
  }, after);
}

export function resolveForm(operator, effect, after) {
  const receipt = h('input', { type: 'text', name: 'receipt', placeholder: 'provider receipt you found, e.g. ch_3Pq…, msg id, resource id', 'data-testid': 'receipt', autocomplete: 'off' });
  const reason = h('textarea', { name: 'reason', rows: 2, placeholder: 'what you checked and where — kept in the ledger with your name', 'data-testid': 'reason', required: true });
  // Nothing is chosen for the operator: what happened is what they found, and the form says so until they pick.
  const committed = h('input', { type: 'radio', name: 'outcome', value: 'committed', required: true, 'data-testid': 'outcome-committed' });
  const notCommitted = h('input', { type: 'radio', name: 'outcome', value: 'not_committed', required: true, 'data-testid': 'outcome-not-committed' });
  const receiptRow = h('label', { class: 'field' }, h('span', {}, 'Receipt (required when it happened)'), receipt);
  const sync = () => { receiptRow.hidden = !committed.checked; receipt.required = committed.checked; };
  // A reason of spaces is no reason.
  reason.addEventListener('input', () => reason.setCustomValidity(reason.value.trim() ? '' : 'Say what you checked and where.'));
  reason.setCustomValidity('Say what you checked and where.');
  committed.addEventListener('change', sync);
  notCommitted.addEventListener('change', sync);
  sync();
  return operatorForm({
    testid: 'resolve',
    title: 'Resolve',
    hint: h('p', { class: 'hint' }, 'Look the effect up at the provider (search for the reference ', h('code', { class: 'wrap' }, effect.effectId), ' or the target). Record what you found; effectd tells the agent and never asks the model whether it happened.'),
    fields: [
      h('fieldset', { class: 'choice', 'data-testid': 'outcome' },
        h('legend', {}, 'What did you find at the provider? (choose one)'),
        h('label', { class: 'option' }, committed, h('span', {}, h('b', {}, 'It happened'), ' — committed, with the receipt')),
        h('label', { class: 'option' }, notCommitted, h('span', {}, h('b', {}, 'It did not happen'), ' — not committed; the agent may try again as a new step'))),
      receiptRow,
      h('label', { class: 'field' }, h('span', {}, 'Reason (required)'), reason),
    ],
    submitLabel: `Record resolution as ${operator}`,
    send: () => {
      if (!committed.checked && !notCommitted.checked) throw new Error('Choose what you found: it happened, or it did not.');
      return api(`/v1/effects/${enc(effect.effectId)}/resolve`, { method: 'POST', body: { outcome: committed.checked ? 'committed' : 'not_committed', reason: reason.value.trim(), ...(committed.checked && receipt.value.trim() ? { receipt: receipt.value.trim() } : {}) } });
    },
    done: (resolved) => `Recorded: ${STATE_LABEL[resolved.state] ?? resolved.state}, resolved by ${resolved.resolvedBy}.`,
  }, after);
}
