import { subscriptionRenewal } from '../../../sagas/subscription-renewal.saga.js';
import { tripBooking } from '../../../sagas/trip-booking.saga.js';
import { compensationStepKey, type SagaDefinition } from '../../../src/core/saga/saga-definition.js';
import type { BusinessIdentity, IntentSpec, ProviderKind } from './workloads.js';
import { CodedError } from '../../../src/shared/coded-error.js';

/** How a step's provider refuses it when the cell's `failAt` names that step: a definite 4xx. */
export interface StepRefusal {
  status: number;
  body: unknown;
  /** In words, for the transcript and docs/benchmark.md. */
  why: string;
  /** The refusal happens during execution, so a Stripe-like provider stores it under the key (a same-key retry replays it). */
  afterExecutionBegan: boolean;
}

/**
 * A saga workload: the very definition effectd registers (sagas/), the input one cell gives it, and
 * what the benchmark needs around it — each step as an intent (its tool, where faults are aimed, its
 * business identity at the provider), each compensation as one, and how each step's provider refuses it.
 */
export interface SagaPlan {
  saga: string;
  summary: string;
  providers: ProviderKind[];
  definition: SagaDefinition<any>;
  input(tag: string): Record<string, unknown>;
  /** param-drift: the input as the model rewrites it in a repair attempt (effectd answers 422: other input, same workflow). */
  rephrasedInput(tag: string): Record<string, unknown>;
  /** The forward steps, in order, as intents (`id` = step name). Arguments that need earlier receipts show placeholders. */
  steps(tag: string): IntentSpec[];
  /** A step's arguments as the saga computes them from the input and the receipts so far. */
  stepArgs(tag: string, step: string, receipts: Record<string, string>): Record<string, unknown>;
  /** param-drift for a baseline's step: one parameter reworded or re-cased (never its business identity). */
  rephraseStep(step: string, args: Record<string, unknown>): Record<string, unknown>;
  /** The compensation of a committed step, as an intent (`id` = `compensate:<step>`), or undefined when the step has none. */
  compensation(tag: string, step: string, receipt: string, receipts: Record<string, string>): IntentSpec | undefined;
  /** Step names with a compensation, in forward order. */
  compensable: string[];
  refusals: Record<string, StepRefusal>;
  /** The irreversible message that must never go out without a settled charge. */
  emailStep: string;
  chargeStep: string;
}

interface PlanSpec<I> {
  definition: SagaDefinition<I>;
  summary: string;
  providers: ProviderKind[];
  input(tag: string): Record<string, unknown>;
  rephrasedInput(input: Record<string, unknown>): Record<string, unknown>;
  identities(input: I): Record<string, BusinessIdentity>;
  rephraseStep(step: string, args: Record<string, unknown>): Record<string, unknown>;
  refusals: Record<string, StepRefusal>;
  emailStep: string;
  chargeStep: string;
}

function plan<I>(spec: PlanSpec<I>): SagaPlan {
  const { definition } = spec;
  const parsed = (tag: string): I => definition.input.parse(spec.input(tag));
  const placeholders = new Proxy({}, { get: (_target, name) => `<receipt of ${String(name)}>` }) as Record<string, string>;
  const stepDef = (name: string) => {
    const step = definition.steps.find((s) => s.name === name);
    if (!step) throw new CodedError('internal', `saga ${definition.name} has no step ${name}`);
    return step;
  };
  return {
    saga: definition.name,
    summary: spec.summary,
    providers: spec.providers,
    definition,
    input: spec.input,
    rephrasedInput: (tag) => spec.rephrasedInput(spec.input(tag)),
    steps(tag) {
      const input = parsed(tag);
      const identities = spec.identities(input);
      return definition.steps.map((step) => {
        const args = step.args(input, placeholders);
        return { id: step.name, tool: step.tool, step: step.name, slot: '0', args, equivalents: [], rephrasings: [spec.rephraseStep(step.name, args)], identity: identities[step.name]!, multiplicity: 1 };
      });
    },
    stepArgs: (tag, step, receipts) => stepDef(step).args(parsed(tag), receipts),
    rephraseStep: spec.rephraseStep,
    compensation(tag, step, receipt, receipts) {
      const compensation = stepDef(step).compensation;
      if (!compensation) return undefined;
      const key = compensationStepKey(step);
      return {
        id: key, tool: compensation.tool, step: key, slot: '0', args: compensation.args(receipt, parsed(tag), receipts),
        equivalents: [], rephrasings: [], identity: { kind: 'undo', of: step }, multiplicity: 1,
      };
    },
    compensable: definition.steps.filter((s) => s.compensation).map((s) => s.name),
    refusals: spec.refusals,
    emailStep: spec.emailStep,
    chargeStep: spec.chargeStep,
  };
}

const cardDeclined: StepRefusal = {
  status: 402, afterExecutionBegan: true, why: 'the card is declined (HTTP 402)',
  body: { error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' } },
};

const mailboxRefused = (why: string): StepRefusal => ({
  status: 422, afterExecutionBegan: false, why: `the mailbox is refused (HTTP 422: ${why})`,
  body: { statusCode: 422, name: 'validation_error', message: why },
});

export const SAGA_PLANS: SagaPlan[] = [
  plan({
    definition: tripBooking,
    summary: 'saga: hold a flight → book a hotel → charge the card → email the itinerary (irreversible, last); a failAt step is refused by its provider',
    providers: ['travel', 'payments', 'email'],
    input: (tag) => ({
      tripId: tag, traveller: { name: `Ana Lima ${tag}`, email: `ana.${tag}@example.com` },
      flight: 'TP1234', date: '2027-03-14', hotel: 'Hotel Lisboa', nights: 3, amount: '640.00',
    }),
    // The model re-cases the traveller's name in its repair attempt: other input for the same workflow.
    rephrasedInput: (input) => ({ ...input, traveller: { ...(input.traveller as object), name: String((input.traveller as { name: string }).name).toUpperCase() } }),
    identities: (trip) => ({
      'hold-flight': { kind: 'hold', flight: trip.flight, passenger: trip.traveller.name, date: trip.date },
      'book-hotel': { kind: 'booking', hotel: trip.hotel, guest: trip.traveller.name, checkIn: trip.date },
      'charge-card': { kind: 'charge', invoiceId: `TRIP-${trip.tripId}` },
      'email-itinerary': { kind: 'email', to: trip.traveller.email, template: 'itinerary' },
    }),
    rephraseStep: (step, args) => {
      switch (step) {
        case 'hold-flight': return { ...args, passenger: String(args.passenger).toUpperCase() };
        case 'book-hotel': return { ...args, guest: String(args.guest).toUpperCase() };
        case 'charge-card': return { ...args, description: `${String(args.description)} (second try)` };
        default: return { ...args, subject: `${String(args.subject)} (resent)` };
      }
    },
    refusals: {
      'hold-flight': {
        status: 400, afterExecutionBegan: true, why: 'the flight is full (HTTP 400 flight_full)',
        body: { error: { type: 'invalid_request_error', code: 'flight_full', message: 'No seats left on TP1234 on 2027-03-14.' } },
      },
      'book-hotel': {
        status: 400, afterExecutionBegan: true, why: 'the hotel is sold out (HTTP 400 rooms_unavailable)',
        body: { error: { type: 'invalid_request_error', code: 'rooms_unavailable', message: 'Hotel Lisboa has no rooms for these nights.' } },
      },
      'charge-card': cardDeclined,
      'email-itinerary': mailboxRefused('the recipient mailbox does not exist'),
    },
    emailStep: 'email-itinerary',
    chargeStep: 'charge-card',
  }),
  plan({
    definition: subscriptionRenewal,
    summary: 'saga: charge the period → email the receipt (irreversible, last); a failAt step is refused by its provider',
    providers: ['payments', 'email'],
    input: (tag) => ({ subscriptionId: `sub-${tag}`, period: '2027-03', email: `subscriber.${tag}@example.com`, amount: 1900 }),
    rephrasedInput: (input) => ({ ...input, amount: '19.00 USD' }),
    identities: (renewal) => ({
      charge: { kind: 'charge', invoiceId: `${renewal.subscriptionId}-${renewal.period}` },
      'email-receipt': { kind: 'email', to: renewal.email, template: 'renewal-receipt' },
    }),
    rephraseStep: (step, args) => (step === 'charge' ? { ...args, description: `${String(args.description)} (retry)` } : { ...args, subject: `${String(args.subject)} (resent)` }),
    refusals: {
      charge: cardDeclined,
      'email-receipt': mailboxRefused('the mailbox is full'),
    },
    emailStep: 'email-receipt',
    chargeStep: 'charge',
  }),
];

/** The `failAt` values of a saga workload: none, or each of its steps. */
export function failAtValues(plan: SagaPlan): string[] {
  return ['none', ...plan.definition.steps.map((s) => s.name)];
}
