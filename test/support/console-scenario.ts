import { readFileSync, writeFileSync } from 'node:fs';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from './effectd-harness.js';

export interface ConsoleScenario {
  effectd: InProcessEffectd;
  /** Raw bearer tokens, as a person would paste them. */
  tokens: { agent: string; operator: string };
  /** The escalated weak.notify of the trip workflow (the operator resolves it) and of the refund desk (the agent tries). */
  escalated: { trip: string; refund: string };
  /** The charge whose command said `"principal": "default-operator"`, sent with the agent's token. */
  impersonated: string;
  workflows: { trip: string; refund: string; invoices: string; saga: string; repeat: string; long: string; odd: string };
  /** The 500-step workflow's effect ids, step 1 first. */
  longSteps: string[];
  /** A charge whose invoice id is markup and whose workflow id is long: shown as text, whole. */
  odd: { effectId: string; invoiceId: string };
  /** A second charge of an invoice already charged in its workflow: held by the content index. */
  held: { effectId: string; invoiceId: string };
  /** The payment provider's base URL (its oracle is the ground truth). */
  paymentsUrl: string;
  /**
   * A charge a provider that forgets keys sooner than its contract says (`billing.charge`: a second
   * payments simulator, keys kept 300 ms, search lag 1 s; the contract says 24 h) made twice on
   * the agent's same-key resend, and effectd's audit detected: its receipt, the extra charge, and
   * that provider's URL (its oracle shows the refund).
   */
  duplicate: { effectId: string; workflowId: string; invoiceId: string; own: string; extra: string; providerUrl: string };
  close(): Promise<void>;
}

/** Enough single-email workflows that the console's list of recent workflows (60) is truncated. */
export const ONBOARDED = 56;
export const SCENARIO_WORKFLOWS = ONBOARDED + 8;
/** The steps of the long workflow: a 500-step agent run must stay a page an operator can read. */
export const LONG_STEPS = 500;
/** Markup where data goes: the console must show it as text (no innerHTML with data). */
export const MARKUP = '<img src=x onerror="window.__xss=1">';

const arm = (sim: RunningSimulator, rules: unknown[]) => postJson(`${sim.url}/_admin/faults`, { rules });

/**
 * effectd with simulated providers and a few workflows an on-call engineer would meet: a charge whose
 * reply was lost and that reconciliation confirmed, an email, two notifications nobody can confirm
 * (escalated), a declined card, a charge a forgetful provider made twice (a detected duplicate),
 * and some plain successes.
 */
export async function startConsoleScenario(): Promise<ConsoleScenario> {
  const payments = await startSimulator('payments', { options: { searchLagMs: 700 } });
  const email = await startSimulator('email');
  const weak = await startSimulator('weak');
  const travel = await startSimulator('travel');
  // A second payment provider that forgets idempotency keys after 300 ms (its contract says 24 h)
  // while its search lags 1 s: the tools billing.charge / billing.refund, copies of the payments
  // ones pointed at it, the charge with a 2 s settle window (its duplicate audit runs then).
  const forgetful = await startSimulator('payments', { options: { retentionMs: 300, searchLagMs: 1_000 } });
  const dataDir = tempDir('effectd-console-');
  const configFile = writeToolsConfig(dataDir, { payments: payments.url, email: email.url, weak: weak.url, travel: travel.url }, { 'payments.charge': { settleWindowMs: 8_000 } });
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as { providers: Record<string, Record<string, unknown>>; tools: Record<string, unknown>[] };
  const copy = (name: string, as: string, patch: Record<string, unknown>) => ({ ...config.tools.find((t) => t.name === name)!, name: as, provider: 'billing', ...patch });
  config.providers.billing = { ...config.providers.payments, baseUrl: forgetful.url };
  config.tools.push(
    copy('payments.charge', 'billing.charge', { settleWindowMs: 2_000, undo: { tool: 'billing.refund', args: { chargeId: '{receipt}' } } }),
    copy('payments.refund', 'billing.refund', {}),
  );
  writeFileSync(configFile, JSON.stringify(config));
  const effectd = await startEffectd({ dataDir, configFile });
  const run = Date.now().toString(36).slice(-5);
  // The scenario builds the operator's queue from lost replies, so it asks for answers at once
  // (Prefer: wait=0): an answer settled inside the call would leave nothing for the reconciler.
  const submit = async (cmd: Record<string, unknown>) => {
    const answer = await postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, prefer: 'wait=0' });
    if (answer.status !== 200) throw new Error(`submit ${JSON.stringify(cmd)}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body as { effectId: string; state: string };
  };
  const settledAs = (effectId: string, state: string) => waitFor(`${effectId} to be ${state}`, async () => {
    const e = (await getJson(`${effectd.url}/v1/effects/${effectId}`, effectd.operator)).body;
    return e.state === state ? e : undefined;
  }, 15_000);

  const workflows = {
    trip: `trip-lisbon-${run}`, refund: `refund-desk-${run}`, invoices: `invoices-may-${run}`, saga: `trip-porto-${run}`, repeat: `top-up-${run}`,
    long: `nightly-digest-${run}`, odd: `customer-success.quarterly-renewal-campaign.enterprise-accounts.emea-north.batch-0042-${run}`,
  };
  // A long agent run: 500 emails in one workflow, a few of them refused by the provider (not done).
  await arm(email, [7, 8, 233, 234, 235, 410].map((nth) => ({ match: { method: 'POST', pathPrefix: '/emails', nth }, action: { type: 'status', status: 422, body: { name: 'validation_error', message: 'The to address is on the suppression list.' } } })));
  const longSteps: string[] = [];
  for (let i = 1; i <= LONG_STEPS; i++) {
    longSteps.push((await submit({ workflowId: workflows.long, step: i, tool: 'email.send', args: { to: `subscriber${i}@example.com`, subject: 'Your nightly digest', text: `Digest ${i}`, template: 'digest' } })).effectId);
  }
  await arm(email, []);
  const markupInvoice = `${MARKUP}-${run}`;
  const odd = { effectId: (await submit({ workflowId: workflows.odd, step: 1, tool: 'payments.charge', args: { invoiceId: markupInvoice, amount: '12.00 USD', description: MARKUP } })).effectId, invoiceId: markupInvoice };
  for (let i = 1; i <= ONBOARDED; i++) {
    await submit({ workflowId: `onboarding-${run}-${i}`, step: 1, tool: 'email.send', args: { to: `new.user${i}@example.com`, subject: 'Welcome aboard', text: `Hello user ${i}` } });
  }
  // The forgetful provider: the reply of the first charge is lost; the agent repeats the step after
  // the provider forgot the key and before its search shows the charge, so effectd's same-key
  // resend charges again. effectd audits it once the settle window has passed since the resend.
  // Done first, so the two escalations below stay the queue's newest entries.
  await arm(forgetful, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
  const invoiceId = `INV-${run}-2291`;
  const dupCommand = { workflowId: `renewals-${run}`, step: 1, tool: 'billing.charge', args: { invoiceId, amount: '89.00 USD', description: 'Annual plan renewal' } };
  const first = await submit(dupCommand);
  if (first.state !== 'unknown') throw new Error(`the forgetful provider's first charge should be unknown, it is ${first.state}`);
  await new Promise((resolve) => setTimeout(resolve, 450));
  const resent = await submit(dupCommand);
  if (resent.state !== 'committed') throw new Error(`the repeated charge should be committed through the resend, it is ${resent.state}`);
  await arm(forgetful, []);
  const detected = await waitFor('the duplicate audit of the forgetful provider\'s charge', async () => {
    const e = (await getJson(`${effectd.url}/v1/effects/${first.effectId}`, effectd.operator)).body;
    return e.duplicates ? (e as { receipt: string; duplicates: { receipts: string[]; unhandled: string[] } }) : undefined;
  }, 15_000);
  if (detected.duplicates.unhandled.length !== 1) throw new Error(`one extra charge expected, effectd reports ${JSON.stringify(detected.duplicates)}`);
  const duplicate = { effectId: first.effectId, workflowId: dupCommand.workflowId, invoiceId, own: detected.receipt, extra: detected.duplicates.unhandled[0]!, providerUrl: forgetful.url };
  await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }]);
  await arm(weak, [{ match: { method: 'POST', pathPrefix: '/notify', times: 2 }, action: { type: 'drop-after-mutation' } }]);
  // The agent claims to be the operator: the ledger records the agent, the claim only as on-behalf-of.
  const charge = await submit({ workflowId: workflows.trip, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-1042`, amount: '249.00 USD', description: 'Lisbon, 3 nights' }, principal: 'default-operator' });
  await settledAs(charge.effectId, 'committed');
  await submit({ workflowId: workflows.trip, step: 2, tool: 'email.send', args: { to: 'traveller@example.com', subject: 'Your Lisbon itinerary', text: 'Hotel Alfama, 12–15 June.' } });
  const trip = await submit({ workflowId: workflows.trip, step: 3, tool: 'weak.notify', args: { channel: 'travel-ops', about: `trip ${run}`, text: `Trip ${run} booked and paid` } });
  const refund = await submit({ workflowId: workflows.refund, step: 1, tool: 'weak.notify', args: { channel: 'billing', about: `refund INV-${run}-0990`, text: `Refund approved for INV-${run}-0990` } });
  await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 2 }, action: { type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } } } }]);
  await submit({ workflowId: workflows.invoices, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-1043`, amount: 4900 } });
  await submit({ workflowId: workflows.invoices, step: 2, tool: 'payments.charge', args: { invoiceId: `INV-${run}-1044`, amount: 12900 } });
  // A trip-booking saga whose card is declined: the hold and the booking are undone in reverse order.
  await arm(payments, [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined' } } } }]);
  const saga = await postJson(`${effectd.url}/v1/sagas`, { saga: 'trip-booking', workflowId: workflows.saga, input: { tripId: `P-${run}`, traveller: { name: 'Ana Lima', email: 'ana@example.com' }, flight: 'TP1946', date: '2027-06-12', hotel: 'Hotel Ribeira', nights: 2, amount: '412.00' } }, effectd.agent);
  if (saga.body?.status !== 'compensated') throw new Error(`saga: ${saga.status} ${JSON.stringify(saga.body)}`);
  await arm(payments, []);
  // The agent charges the same top-up twice in one workflow without declaring a repeat: the second is held.
  const topUp = { invoiceId: `TOPUP-${run}`, amount: '30.00 USD', description: 'Wallet top-up' };
  await settledAs((await submit({ workflowId: workflows.repeat, step: 1, tool: 'payments.charge', args: topUp })).effectId, 'committed');
  const held = await submit({ workflowId: workflows.repeat, step: 2, tool: 'payments.charge', args: topUp });
  if (held.state !== 'held') throw new Error(`the repeated top-up should be held, it is ${held.state}`);
  await settledAs(trip.effectId, 'escalated');
  await settledAs(refund.effectId, 'escalated');

  const token = (headers: Record<string, string>) => headers.authorization!.replace(/^Bearer /, '');
  return {
    effectd,
    tokens: { agent: token(effectd.agent), operator: token(effectd.operator) },
    escalated: { trip: trip.effectId, refund: refund.effectId },
    impersonated: charge.effectId,
    held: { effectId: held.effectId, invoiceId: topUp.invoiceId },
    paymentsUrl: payments.url,
    duplicate,
    workflows,
    longSteps,
    odd,
    close: async () => {
      await effectd.close();
      await Promise.all([payments.close(), forgetful.close(), email.close(), weak.close(), travel.close()]);
    },
  };
}
