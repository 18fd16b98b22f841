/**
 * Benchmark workloads: what the agent is asked to do, and what the world may look like afterwards.
 * Each intent is one declared effect with an allowed multiplicity (how many provider-side records
 * of its business identity may exist) and the arguments a model regenerates or rephrases on retry.
 */

import type { FaultName } from './names.js';
import { SAGA_PLANS, type SagaPlan } from './saga-plans.js';
import { CodedError } from '../../../src/shared/coded-error.js';

/** A simulated provider of a cell; `payments-v2` is the payments simulator with Stripe's v2 idempotency profile. */
export type ProviderKind = 'payments' | 'payments-v2' | 'email' | 'cloud' | 'weak' | 'travel';

/** How the provider's own records of one intent are recognised: by business identity, never by key. */
export type BusinessIdentity =
  | { kind: 'charge'; invoiceId: string }
  | { kind: 'email'; to: string; template: string }
  | { kind: 'instance'; name: string }
  | { kind: 'line'; token: string }
  | { kind: 'notification'; channel: string; token: string }
  | { kind: 'hold'; flight: string; passenger: string; date: string }
  | { kind: 'booking'; hotel: string; guest: string; checkIn: string }
  /** A compensation: its records are the undo executions the provider kept (see ground-truth.ts). */
  | { kind: 'undo'; of: string };

export interface IntentSpec {
  /** Unique within the workload, e.g. `charge` or `email-3`. */
  id: string;
  tool: string;
  /** The harness's plan position; the model never chooses it. */
  step: string;
  slot: string;
  args: Record<string, unknown>;
  /** Arguments a model regenerates with the same meaning (4900 ↔ "49.00", spacing, letter case). */
  equivalents: Record<string, unknown>[];
  /** A changed or reworded parameter, as a model writes it in a repair attempt. */
  rephrasings: Record<string, unknown>[];
  identity: BusinessIdentity;
  /** Provider-side records of this identity the workload allows (and expects). */
  multiplicity: number;
  /** A declared, intentional repeat of an earlier intent (docs/design.md: `repeat: {reason}`). */
  repeat?: { reason: string };
  /** Intents that must be done before this one starts (charge, then email the receipt). */
  dependsOn?: string[];
  /**
   * Issue 32: the model's checkpoint predates this intent's first answer, so after its first call
   * (whatever it answered, or when the agent died during it) the model decides the intent again as
   * a new step, writing `field` as `spelling` (the bare digits "4900"); refused, it writes what the
   * refusal states first (respelling.ts). Once per intent.
   */
  redecideRespelled?: { field: string; spelling: string };
}

export interface Workload {
  name: string;
  summary: string;
  providers: ProviderKind[];
  /** `tag` is unique per cell and appears in every business identifier, so cells never mix. */
  intents(tag: string): IntentSpec[];
  /**
   * A saga workload: effectd runs the saga named here (POST /v1/sagas) and the baselines run its
   * steps as a sequential script; `intents` are then the saga's forward steps, in order.
   */
  saga?: SagaPlan;
  /** Faults this workload does not run (a fault measured on other workloads that would only repeat them here). */
  skipsFaults?: readonly FaultName[];
  /** The intents a fault may hit (default: any): the one whose story the workload tells. */
  faultTargets?: readonly string[];
}

const registry = new Map<string, Workload>();

/** The hook later workloads use (trip-booking, subscription-renewal, a declared-repeat reminder). */
export function registerWorkload(workload: Workload): void {
  if (registry.has(workload.name)) throw new CodedError('internal', `workload ${workload.name} is registered twice`);
  registry.set(workload.name, workload);
}

export function workload(name: string): Workload | undefined {
  return registry.get(name);
}

export function workloadNames(): string[] {
  return [...registry.keys()];
}

/**
 * The matrix of issue 3, in its order, plus `notify`: a tool with no key and no lookup, the case
 * effectd can only hand to a human (escalated), which the benchmark must show rather than hide;
 * `reminder-repeat`, a declared repeat (issue 6); and the two sagas (issue 7). `charge-v2` is
 * `charge` against Stripe's v2 profile (issue 13, item 7), beside it under every fault.
 */
export const DEFAULT_WORKLOADS = ['charge', 'charge-v2', 'email-5', 'cloud-create', 'append-line', 'charge-then-email', 'notify', 'reminder-repeat', 'charge-respelled', 'trip-booking', 'subscription-renewal'] as const;

/** Workloads that run one intent against each of Stripe's idempotency profiles, for the v1/v2 table. */
export const STRIPE_PROFILE_WORKLOADS = { v1: 'charge', v2: 'charge-v2' } as const;

function chargeIntent(tag: string, tool = 'payments.charge'): IntentSpec {
  const invoiceId = `INV-${tag}`;
  const args = { invoiceId, amount: 4900, currency: 'usd', customer: `cus_${tag}`, description: `Invoice ${invoiceId}` };
  return {
    id: 'charge', tool, step: 'charge-invoice', slot: '0', args,
    equivalents: [{ ...args, amount: '49.00' }, { ...args, amount: '49.00 USD' }, { ...args, currency: 'USD' }],
    rephrasings: [{ ...args, description: `Payment for invoice ${invoiceId}` }, { ...args, description: `Invoice ${invoiceId} (second try)` }],
    identity: { kind: 'charge', invoiceId },
    multiplicity: 1,
  };
}

function emailIntent(id: string, step: string, slot: string, to: string, template: string, subject: string, text: string, rephrased: string): IntentSpec {
  const args = { to, subject, text, template };
  return {
    id, tool: 'email.send', step, slot, args,
    equivalents: [{ ...args, to: to.toUpperCase() }, { ...args, subject: `  ${subject} ` }],
    rephrasings: [{ ...args, subject: rephrased }, { ...args, text: `${text} (resent)` }],
    identity: { kind: 'email', to, template },
    multiplicity: 1,
  };
}

registerWorkload({
  name: 'charge',
  summary: 'charge one invoice (payments.charge, Stripe v1 keys)',
  providers: ['payments'],
  intents: (tag) => [chargeIntent(tag)],
});

registerWorkload({
  name: 'charge-v2',
  summary: 'charge one invoice (payments.charge-v2, Stripe v2 keys: kept 30 days; a same-key resend after a failure executes the failed work again)',
  providers: ['payments-v2'],
  intents: (tag) => [chargeIntent(tag, 'payments.charge-v2')],
});

registerWorkload({
  name: 'email-5',
  summary: 'email an itinerary to 5 recipients: 5 slots, each exactly once (email.send, Resend keys)',
  providers: ['email'],
  intents: (tag) => Array.from({ length: 5 }, (_, i) =>
    emailIntent(`email-${i + 1}`, 'send-itinerary', String(i), `guest${i + 1}.${tag}@example.com`, 'itinerary',
      'Your itinerary for the Lisbon trip', 'Flight TP1234 departs 09:40. Hotel Casa Azul, 3 nights.', 'Your Lisbon trip itinerary')),
});

registerWorkload({
  name: 'cloud-create',
  summary: 'launch one named instance (cloud.create-instance, AWS client tokens per account and region)',
  providers: ['cloud'],
  intents: (tag) => {
    const args = { name: `web-${tag}`, size: 'small', image: 'debian-12', region: 'eu-west-1' };
    return [{
      id: 'instance', tool: 'cloud.create-instance', step: 'launch-web', slot: '0', args,
      equivalents: [{ ...args, name: ` web-${tag} ` }, { name: args.name, size: 'small' }],
      rephrasings: [{ ...args, size: 'medium' }, { ...args, image: 'debian-12-slim' }],
      identity: { kind: 'instance', name: args.name },
      multiplicity: 1,
    }];
  },
});

registerWorkload({
  name: 'append-line',
  summary: 'append one shipment line to a journal (weak.append-line: no key; lookup by stamped reference)',
  providers: ['weak'],
  intents: (tag) => {
    const token = `ORD-${tag}`;
    const args = { file: 'shipments.log', about: `${token} handed to the carrier`, line: `${token} packed and handed to the carrier` };
    return [{
      id: 'line', tool: 'weak.append-line', step: 'log-shipment', slot: '0', args,
      // (Leaving out `file` is not an equivalent: it writes to the default journal, another target.)
      equivalents: [{ ...args, line: `  ${args.line} ` }, { ...args, about: ` ${args.about} ` }],
      rephrasings: [{ ...args, line: `${token}: packed, handed to carrier` }, { ...args, line: `${token} shipped (carrier pickup)` }],
      identity: { kind: 'line', token },
      multiplicity: 1,
    }];
  },
});

registerWorkload({
  name: 'charge-then-email',
  summary: 'charge an invoice, then email the receipt: two steps, the email only after the charge is done',
  providers: ['payments', 'email'],
  intents: (tag) => [
    chargeIntent(tag),
    { ...emailIntent('receipt-email', 'email-receipt', '0', `billing.${tag}@example.com`, 'payment-receipt',
      `Payment received for INV-${tag}`, 'We received 49.00 USD. Thank you.', `Receipt: your payment for INV-${tag}`), dependsOn: ['charge'] },
  ],
});

registerWorkload({
  name: 'notify',
  summary: 'post one chat notification (weak.notify: no key, no lookup: a lost reply can only be settled by a human)',
  providers: ['weak'],
  intents: (tag) => {
    const token = `ORD-${tag}`;
    const args = { channel: 'ops', about: `${token} shipped`, text: `${token} shipped today` };
    return [{
      id: 'notification', tool: 'weak.notify', step: 'notify-ops', slot: '0', args,
      equivalents: [{ ...args, text: ` ${args.text}  ` }],
      rephrasings: [{ ...args, text: `${token} has shipped` }, { ...args, text: `Shipped: ${token}` }],
      identity: { kind: 'notification', channel: 'ops', token },
      multiplicity: 1,
    }];
  },
});

registerWorkload({
  name: 'reminder-repeat',
  summary: 'send the same payment reminder twice on purpose: two steps, the second declared `repeat: {reason}` (exactly 2 emails allowed and expected)',
  providers: ['email'],
  intents: (tag) => {
    const to = `customer.${tag}@example.com`;
    const subject = `Reminder: invoice INV-${tag} is due`;
    const text = `Invoice INV-${tag} (49.00 USD) is due on 30 November. Pay at https://pay.example.com/INV-${tag}.`;
    const reminder = (id: string, step: string) => emailIntent(id, step, '0', to, 'payment-reminder', subject, text, `Payment reminder for INV-${tag}`);
    return [
      reminder('reminder-1', 'remind'),
      // The same content again, on purpose: without the declaration the content index would hold it.
      { ...reminder('reminder-2', 'remind-again'), repeat: { reason: 'the second reminder, one week after the first: the same email again on purpose' } },
    ];
  },
});

registerWorkload({
  name: 'charge-respelled',
  summary: 'issue 32: charge an invoice 4900 (minor units); after the crash the model decides the charge again as a new step, writing the amount "4900", then — refused — what the refusal states first; then the invoice is charged a second time on purpose (a declared repeat): exactly 2 charges allowed and expected',
  providers: ['payments'],
  // Its charge is the charge workload's: the provider's lie about retention is measured there.
  skipsFaults: ['retention-shorter-than-declared'],
  // The fault hits the first charge: the crash the model resumes from.
  faultTargets: ['charge'],
  intents: (tag) => {
    const charge = chargeIntent(tag);
    return [
      { ...charge, redecideRespelled: { field: 'amount', spelling: '4900' } },
      // The same invoice, the same amount, again on purpose: without the declaration the target (an invoice is paid once) would hold it.
      { ...charge, id: 'charge-again', step: 'charge-again', dependsOn: ['charge'], repeat: { reason: 'the customer asked for a second charge of this invoice' } },
    ];
  },
});

for (const plan of SAGA_PLANS) {
  registerWorkload({ name: plan.saga, summary: plan.summary, providers: plan.providers, intents: (tag) => plan.steps(tag), saga: plan });
}
