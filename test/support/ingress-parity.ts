// The ingress-parity table: one list of scenarios every front door must answer alike, and how each
// door's answer is read in the same terms. test/app/ingress-parity.app.spec.ts plays all of it
// through each door's mapping in process; test/int/ingress-parity.int.spec.ts plays the scenarios
// the real broker and PostgreSQL can change (`real: true`) through the real transports.
import { expect } from 'vitest';
import type { LedgerEvent } from '../../src/core/events.js';
import { workflowStream } from '../../src/core/streams.js';
import { AgentStatus, type EffectOutcome } from '../../src/sdk/index.js';

export type Status = 'done' | 'not_done' | 'unknown' | 'refused';

/** What a door answered, in the same terms for every door. */
export interface Answer {
  status: Status;
  code?: string;
  /** For a refused conflict: where the recorded effect stands. */
  recorded?: string;
  replayed?: boolean;
}
export type Command = Record<string, unknown>;

export interface Door {
  name: 'http' | 'kafka' | 'mcp';
  /** `atOnce`: the answer does not wait for an inline settle (HTTP `Prefer: wait=0`, Kafka `waitMs: 0`, MCP `dev.effectd/waitMs: 0`). */
  submit(command: Command, options?: { atOnce?: boolean }): Promise<Answer>;
}

/** A provider fault for the next charge, in the simulators' fault-rule terms (the scripted provider takes the same). */
export type ChargeFault = { type: 'drop-after-mutation' } | { type: 'status'; status: number; body: unknown } | { type: 'delay'; ms: number };

/** What a scenario may use, for one door: names of its own (workflow, invoice) and the shared parts. */
export interface Run {
  door: Door;
  tag: string;
  workflowId: string;
  /** payments.charge for this door's invoice; `args` change the arguments, `fields` the command. */
  charge(args?: Record<string, unknown>, fields?: Record<string, unknown>): Command;
  /** The next charge meets this fault at the provider. */
  arm(fault: ChargeFault): Promise<void>;
  /** Another attempt holding the claim: the gateway called directly, as another instance would. */
  holdClaim(command: Command): Promise<unknown>;
  /** Charges the provider has received for this door's invoice. */
  charges(): Promise<number>;
  /** How long the provider holds a delayed charge. */
  holdMs: number;
}

export interface Scenario {
  name: string;
  /** Played through the real transports too (the int tier): what a broker or a network could change. */
  real: boolean;
  /** Each submission's answer, in order. */
  answers: Answer[];
  /** HTTP's status code per submission. */
  http: number[];
  /** The workflow stream's event types afterwards (the events themselves must match between doors). */
  events: string[];
  /** Who the events record as acting: the authenticated credential, the payload's principal only as onBehalfOf. */
  actors: Record<string, string | undefined>[];
  /** Kafka's dead-letter reason for a refused command. */
  deadLetter?: string;
  play(run: Run): Promise<Answer[]>;
}

const CHARGED = ['EffectDeclared', 'AttemptStarted', 'AttemptFinished'];
const AGENT = [{ principal: 'default-agent', onBehalfOf: 'customer-7' }];
const DECLINED = { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } };

export const SCENARIOS: Scenario[] = [
  {
    name: 'plain effect', real: true, answers: [{ status: 'done', replayed: false }], http: [200], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => [await door.submit(charge())],
  },
  {
    name: 'replay (the same command again)', real: true, answers: [{ status: 'done', replayed: false }, { status: 'done', replayed: true }], http: [200, 200], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => [await door.submit(charge()), await door.submit(charge())],
  },
  {
    name: 'lost reply (committed, then the response dropped), settled by the resubmission', real: true,
    answers: [{ status: 'unknown', replayed: false }, { status: 'done' }], http: [200, 200],
    // The resubmission reconciles first (the lookup is not conclusive yet), then re-sends with the SAME key.
    events: [...CHARGED, 'ReconciliationChecked', 'AttemptStarted', 'AttemptFinished'], actors: AGENT,
    play: async ({ door, charge, arm }) => {
      await arm({ type: 'drop-after-mutation' });
      // The first answer does not wait for an inline settle: the resubmission's reconcile-first is the point here.
      return [await door.submit(charge(), { atOnce: true }), await door.submit(charge())];
    },
  },
  {
    name: 'conflict (the same step, other args)', real: false, answers: [{ status: 'done', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'done' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => [await door.submit(charge()), await door.submit(charge({ amount: 1300 }))],
  },
  {
    // Refused, not not_done: the recorded effect may have happened, and the refusal says it is being checked.
    name: 'conflict while the recorded effect is unknown', real: false, answers: [{ status: 'unknown', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'unknown' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge, arm }) => {
      await arm({ type: 'drop-after-mutation' });
      return [await door.submit(charge(), { atOnce: true }), await door.submit(charge({ amount: 1300 }))];
    },
  },
  {
    // The one case a refusal may point to a new step: the recorded effect is proven not done.
    name: 'conflict after the recorded effect was proven not done', real: false, answers: [{ status: 'not_done', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'not_done' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge, arm }) => {
      await arm({ type: 'status', status: 402, body: DECLINED });
      return [await door.submit(charge()), await door.submit(charge({ amount: 1300 }))];
    },
  },
  {
    name: 'in-flight claim (another attempt holds it)', real: true, answers: [{ status: 'unknown' }, { status: 'done', replayed: true }], http: [409, 200], events: CHARGED, actors: AGENT,
    play: async ({ door, charge, arm, holdClaim, charges, holdMs }) => {
      await arm({ type: 'delay', ms: holdMs });
      const before = await charges();
      const holder = holdClaim(charge());
      await until(async () => (await charges()) > before);
      const started = Date.now();
      const during = await door.submit(charge(), { atOnce: true });
      // Asked not to wait: answered at once with the outcome (unknown), not after waiting the claim out.
      expect(Date.now() - started).toBeLessThan(holdMs);
      await holder;
      return [during, await door.submit(charge())];
    },
  },
  {
    name: 'saga start (tool saga:subscription-renewal)', real: true, answers: [{ status: 'done' }], http: [200],
    events: ['SagaStarted', ...CHARGED, ...CHARGED, 'SagaFinished'],
    actors: [{ startedBy: 'default-agent' }, { principal: 'saga:subscription-renewal', onBehalfOf: undefined }, { principal: 'saga:subscription-renewal', onBehalfOf: undefined }],
    play: async ({ door, workflowId, tag }) => [await door.submit({
      workflowId, step: 'saga', tool: 'saga:subscription-renewal', principal: 'customer-7',
      args: { subscriptionId: `sub-${tag}`, period: '2027-01', email: `${tag}@example.com`, amount: '19.00' },
    })],
  },
  {
    name: 'bad input (no step)', real: true, answers: [{ status: 'refused', code: 'invalid_command' }], http: [400], events: [], actors: [], deadLetter: 'invalid_command',
    play: async ({ door, charge }) => {
      const { step: _step, ...noStep } = charge();
      return [await door.submit(noStep)];
    },
  },
  {
    name: 'unknown tool', real: false, answers: [{ status: 'refused', code: 'unknown_tool' }], http: [400], events: [], actors: [], deadLetter: 'unknown_tool',
    play: async ({ door, charge }) => [await door.submit(charge({}, { tool: 'payments.nope' }))],
  },
  {
    name: 'forbidden tenant (the command names another one)', real: true, answers: [{ status: 'refused', code: 'forbidden' }], http: [403], events: [], actors: [], deadLetter: 'forbidden',
    play: async ({ door, charge }) => [await door.submit(charge({}, { tenant: 'victim-tenant' }))],
  },
];

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the provider did not receive the held charge in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const STATUS: Record<AgentStatus, Status> = { [AgentStatus.UNSPECIFIED]: 'unknown', [AgentStatus.DONE]: 'done', [AgentStatus.NOT_DONE]: 'not_done', [AgentStatus.UNKNOWN]: 'unknown', [AgentStatus.REFUSED]: 'refused' };

/** A refusal's text points to a new step only when the step's recorded effect is proven not done. */
function invitesNewStepOnlyIfNotDone(text: string, recorded: string | undefined): void {
  if (recorded !== 'not_done') expect(text).not.toMatch(/new step/);
}

/** What every door's refusal must not say: it is not an outcome of the effect. */
const NOT_AN_OUTCOME = /^(not_done|done|unknown)\b/;

interface AnswerBody { status?: Status; replayed?: boolean; error?: string; message?: string; recorded?: { status: string } }

/** HTTP: an outcome (200, or 409 for a live claim) carries its status; a refused request (4xx) did nothing and is no outcome. */
export function httpAnswer(code: number, body: AnswerBody): Answer {
  if (typeof body.status === 'string') return { status: body.status, ...(body.replayed !== undefined ? { replayed: body.replayed } : {}) };
  expect(code).toBeGreaterThanOrEqual(400);
  expect(code).toBeLessThan(500);
  invitesNewStepOnlyIfNotDone(String(body.message), body.recorded?.status);
  return { status: 'refused', code: String(body.error), ...(body.recorded ? { recorded: body.recorded.status } : {}) };
}

/** Kafka: the outcome record; a refusal is REFUSED with its code, its message starting "refused: ". */
export function kafkaAnswer(outcome: EffectOutcome): Answer {
  if (outcome.error) {
    expect(outcome.message).toMatch(/^refused: /);
    const recorded = outcome.error.recorded ? { recorded: STATUS[outcome.error.recorded.status] } : {};
    invitesNewStepOnlyIfNotDone(outcome.message, recorded.recorded);
    return { status: STATUS[outcome.status], code: outcome.error.code, ...recorded };
  }
  return { status: STATUS[outcome.status], replayed: outcome.replayed };
}

/** MCP: the tool result; not_done is an error result (safe to try again as a new step), unknown never is; a refusal is an error whose text says so. */
export function mcpAnswer(result: { isError?: boolean; structuredContent?: unknown; content?: unknown }): Answer {
  const body = (result.structuredContent ?? {}) as AnswerBody;
  const text = (result.content as { text: string }[])[0]!.text;
  if (typeof body.status === 'string') {
    expect(result.isError ?? false).toBe(body.status === 'not_done');
    return { status: body.status, ...(body.replayed !== undefined ? { replayed: body.replayed } : {}) };
  }
  expect(result.isError).toBe(true);
  expect(text).not.toMatch(NOT_AN_OUTCOME);
  if (body.error === 'intent_conflict' || body.error === 'invalid_command') expect(text).toMatch(/^refused: /);
  invitesNewStepOnlyIfNotDone(text, body.recorded?.status);
  return { status: 'refused', code: String(body.error), ...(body.recorded ? { recorded: body.recorded.status } : {}) };
}

/** The MCP `_meta` carrying a command's identity (never in the arguments), and the tool's MCP name. */
export function mcpCall(command: Command, atOnce = false): { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> } {
  const tool = String(command.tool);
  const _meta: Record<string, unknown> = {
    ...(command.workflowId !== undefined ? { 'dev.effectd/workflowId': command.workflowId } : {}),
    ...(command.step !== undefined ? { 'dev.effectd/step': command.step } : {}),
    ...(command.tenant !== undefined ? { 'dev.effectd/tenant': command.tenant } : {}),
    ...(command.principal !== undefined ? { 'dev.effectd/principal': command.principal } : {}),
    ...(atOnce ? { 'dev.effectd/waitMs': 0 } : {}),
  };
  const name = tool.startsWith('saga:') ? `saga_${tool.slice('saga:'.length)}` : tool.replaceAll('.', '_');
  return { name, arguments: command.args as Record<string, unknown>, _meta };
}

/** The events of a stream without what differs by nature between two runs: times, ids, keys, receipts, names of the run. */
export function normalized(events: LedgerEvent[], tag: string): unknown[] {
  const VOLATILE = new Set(['at', 'askedAt', 'effectId', 'instanceId', 'providerKey', 'leaseUntil', 'keyExpiresAt', 'latencyMs', 'receipt', 'intentDigest', 'contentKey', 'asked', 'seen']);
  const text = JSON.stringify(events).replaceAll(tag, '<tag>').replace(/\b(ch|pa|em|eff)_[A-Za-z0-9_-]+/g, '<$1>');
  return (JSON.parse(text) as Record<string, unknown>[]).map((event) => Object.fromEntries(Object.entries(event).filter(([key]) => !VOLATILE.has(key))));
}

/** Who the events record as acting. */
export function actorsOf(events: LedgerEvent[]): Record<string, string | undefined>[] {
  return events.flatMap((e): Record<string, string | undefined>[] => (e.type === 'EffectDeclared' ? [{ principal: e.principal, onBehalfOf: e.onBehalfOf }] : e.type === 'SagaStarted' ? [{ startedBy: e.startedBy }] : []));
}

/** The answers as the table states them: `replayed` only where it names it. */
export function comparable(answers: Answer[], expected: Answer[]): Answer[] {
  return answers.map(({ replayed, ...rest }, i) => (expected[i]?.replayed === undefined ? rest : { ...rest, replayed }));
}

/** What one scenario played through three doors must show: the table's answers, and the same events and actors on every door. */
export interface Played {
  answers: Answer[];
  events: unknown[];
  types: string[];
  actors: Record<string, string | undefined>[];
}

export function expectParity(scenario: Scenario, http: Played & { codes: number[] }, kafka: Played, mcp: Played): void {
  expect(http.codes, 'HTTP status per submission').toEqual(scenario.http);
  expect(http.answers).toEqual(scenario.answers);
  expect(kafka.answers).toEqual(scenario.answers);
  expect(mcp.answers).toEqual(scenario.answers);
  expect(http.types).toEqual(scenario.events);
  expect(kafka.events).toEqual(http.events);
  expect(mcp.events).toEqual(http.events);
  expect(http.actors).toEqual(scenario.actors);
  expect(kafka.actors).toEqual(http.actors);
  expect(mcp.actors).toEqual(http.actors);
}

/** What a tier gives the table: its ledger, its provider's faults and count, another attempt holding a claim. */
export interface Tier {
  ledger: { readStream(stream: string): Promise<{ event: LedgerEvent }[]> };
  arm(fault: ChargeFault): Promise<void>;
  holdClaim(door: Door['name'], command: Command): Promise<unknown>;
  /** Charges the provider has received (for this invoice, where the tier can tell). */
  charges(invoice: string): Promise<number>;
  holdMs: number;
}

/** Plays a scenario through one door; what it answered and what the ledger recorded (nothing under another tenant). */
export async function playThrough(scenario: Scenario, door: Door, tag: string, tier: Tier): Promise<Played> {
  const workflowId = `wf-${tag}`;
  const invoice = `INV-${tag}`;
  const answers = await scenario.play({
    door, tag, workflowId,
    charge: (args = {}, fields = {}) => ({ workflowId, step: 'charge', tool: 'payments.charge', principal: 'customer-7', args: { invoiceId: invoice, amount: 1200, ...args }, ...fields }),
    arm: (fault) => tier.arm(fault),
    holdClaim: (command) => tier.holdClaim(door.name, command),
    charges: () => tier.charges(invoice),
    holdMs: tier.holdMs,
  });
  const events = (await tier.ledger.readStream(workflowStream('default', workflowId))).map((r) => r.event);
  expect(await tier.ledger.readStream(workflowStream('victim-tenant', workflowId))).toEqual([]);
  return { answers: comparable(answers, scenario.answers), events: normalized(events, tag), types: events.map((e) => e.type), actors: actorsOf(events) };
}
