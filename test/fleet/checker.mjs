// The checker: from ground truth, not from what effectd says — the payments simulator's oracle
// (the charges that exist), every answer every agent received (the history), and the ledger.
// Anomalies:
//   duplicate-effect        more charges for an invoice than steps that declared it
//   never-final             an accepted command with no final answer (done/not_done/refused) by the end of the settle period
//   false-dedup             a declared repeat answered done with the first step's receipt (one charge for two effects)
//   done-without-provider   done with a receipt the provider does not have
//   receipt-mismatch        done with a receipt of another invoice's charge
//   not-done-with-provider  not_done for an invoice whose charges outnumber the steps answered done
//   ledger-unsettled        an effect the ledger still holds open (dispatching/unknown) after the settle period
// and, from the ledger's events (ledger.events) and the oracles, those of ledger-checks.mjs:
//   two-live-claims, saga-order, compensation-order, saga-uncompensated
// A step retried after not_done (`retryOf`) is the same intent: one charge is meant for both.
// A saga start (`kind: 'saga'`) is checked by its charge (TRIP-<workflowId>) and the ledger.
import { checkLedger } from './ledger-checks.mjs';

export function check({ history, charges, refunds = [], sagaOracles, ledger, faults, healAt, endAt }) {
  const anomalies = [];
  const add = (kind, detail) => anomalies.push({ kind, ...detail });
  const chargesByInvoice = new Map();
  const chargeById = new Map();
  for (const c of charges) {
    const inv = c.metadata?.invoice_id;
    if (!chargesByInvoice.has(inv)) chargesByInvoice.set(inv, []);
    chargesByInvoice.get(inv).push(c);
    chargeById.set(c.id, c);
  }
  // commands: key tenant|wf|step
  const commands = new Map();
  let invokes = 0;
  let answers = 0;
  const statusCount = {};
  for (const h of history) {
    const key = `${h.tenant}|${h.wf}|${h.step}`;
    if (!commands.has(key)) commands.set(key, { key, tenant: h.tenant, wf: h.wf, step: h.step, invoiceId: h.invoiceId, repeat: h.repeat, retryOf: h.retryOf, saga: h.kind === 'saga' ? h.saga : undefined, expect: h.expect, door: h.door, answers: [] });
    if (h.type === 'invoke') invokes++;
    else {
      answers++;
      const label = h.http !== undefined && h.http !== 200 ? `${h.status} (http ${h.http})` : h.status;
      statusCount[label] = (statusCount[label] ?? 0) + 1;
      commands.get(key).answers.push(h);
    }
  }
  const stepsByInvoice = new Map();
  let finals = 0;
  let lastFinalAt = 0;
  for (const c of commands.values()) {
    const final = c.answers.find((a) => a.status === 'done' || a.status === 'not_done' || a.status === 'refused');
    c.final = final;
    if (!stepsByInvoice.has(c.invoiceId)) stepsByInvoice.set(c.invoiceId, []);
    stepsByInvoice.get(c.invoiceId).push(c);
    if (!final) {
      const accepted = c.answers.some((a) => a.effectId || a.http === 409 || a.http === 200 || a.via === 'kafka');
      if (accepted) add('never-final', { command: c.key, door: c.door, last: c.answers.at(-1)?.status, lastError: c.answers.at(-1)?.error });
      continue;
    }
    finals++;
    lastFinalAt = Math.max(lastFinalAt, final.t);
    for (const a of c.answers) {
      if (a.status !== 'done' || c.saga) continue;
      const charge = chargeById.get(a.receipt);
      if (!charge) add('done-without-provider', { command: c.key, receipt: a.receipt, at: a.t });
      else if (charge.metadata?.invoice_id !== c.invoiceId) add('receipt-mismatch', { command: c.key, receipt: a.receipt, chargeInvoice: charge.metadata?.invoice_id });
    }
    const doneReceipts = new Set(c.answers.filter((a) => a.status === 'done' && !c.saga).map((a) => a.receipt));
    if (doneReceipts.size > 1) add('receipt-mismatch', { command: c.key, receipts: [...doneReceipts] });
  }
  for (const [invoiceId, steps] of stepsByInvoice) {
    const have = chargesByInvoice.get(invoiceId) ?? [];
    const intents = steps.filter((s) => s.retryOf === undefined).length;
    if (have.length > intents) add('duplicate-effect', { invoiceId, charges: have.map((c) => c.id), steps: steps.map((s) => s.key) });
    const done = steps.filter((s) => s.final?.status === 'done');
    // a compensated saga answers not_done with its charge refunded (saga-uncompensated checks that)
    const notDone = steps.filter((s) => s.final?.status === 'not_done' && !s.saga);
    if (notDone.length > 0 && have.length > done.length) add('not-done-with-provider', { invoiceId, charges: have.map((c) => c.id), notDone: notDone.map((s) => s.key) });
    const repeat = steps.find((s) => s.repeat);
    const original = steps.find((s) => !s.repeat);
    if (repeat?.final?.status === 'done' && original?.final?.status === 'done' && repeat.final.receipt === original.final.receipt) add('false-dedup', { invoiceId, receipt: repeat.final.receipt });
  }
  for (const e of ledger?.open ?? []) add('ledger-unsettled', e);
  const sagaCommands = [...commands.values()].filter((c) => c.saga);
  const sagas = sagaCommands.length ? { started: sagaCommands.length, completed: sagaCommands.filter((c) => c.final?.status === 'done').length, compensated: sagaCommands.filter((c) => c.final?.status === 'not_done').length, other: sagaCommands.filter((c) => !c.final || c.final.status === 'refused').length } : undefined;
  let ledgerSummary;
  if (ledger?.events) {
    const compensatedSagas = sagaCommands.filter((c) => c.final?.status === 'not_done').map((c) => c.wf);
    const found = checkLedger({ ledgerEvents: ledger.events, charges, refunds, emails: sagaOracles?.email?.emails ?? [], compensatedSagas });
    for (const a of found.anomalies) anomalies.push(a);
    ledgerSummary = found.summary;
  }
  // unavailability per fault: answers that were not final while the fault was on, against all answers in it
  const windows = faults.map((f) => {
    const inWindow = history.filter((h) => h.type === 'answer' && h.t >= f.startAt && h.t <= (f.healAt ?? endAt));
    const bad = inWindow.filter((h) => h.status === 'unknown');
    const door = (d) => {
      const mine = inWindow.filter((h) => h.door === d);
      const done = mine.filter((h) => h.status === 'done').map((h) => h.t);
      // the longest stretch of the window with no done answer on this door
      let gap = 0;
      let prev = f.startAt;
      for (const t of [...done, f.healAt ?? endAt]) {
        gap = Math.max(gap, t - prev);
        prev = t;
      }
      return { answers: mine.length, done: done.length, longestGapMs: gap };
    };
    return { fault: f.label, from: f.startAt, to: f.healAt ?? endAt, answers: inWindow.length, notFinal: bad.length, done: inWindow.filter((h) => h.status === 'done').length, http: door('http'), kafka: door('kafka') };
  });
  const byKind = {};
  for (const a of anomalies) byKind[a.kind] = (byKind[a.kind] ?? 0) + 1;
  return {
    valid: anomalies.length === 0,
    operations: { commands: commands.size, invokes, answers, finals, statusCount },
    provider: { charges: charges.length, invoices: chargesByInvoice.size },
    ledger: ledger?.summary,
    ledgerEvents: ledgerSummary?.events,
    ledgerChecked: ledgerSummary,
    sagas,
    faults: faults.length,
    windows,
    settleAfterHealMs: healAt !== undefined && lastFinalAt > healAt ? lastFinalAt - healAt : 0,
    anomaliesByKind: byKind,
    anomalies,
  };
}
