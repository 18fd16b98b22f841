// One gateway, three front doors: every scenario of one table runs through HTTP, through Kafka (the
// real broker, npm run services:up) and through MCP (the official client, Streamable HTTP) against
// one effectd runtime on PostgreSQL, and must get the same three-state status — or the same refusal
// (its own kind on every door, never not_done), with the same error code and, for a conflict, the
// same recorded status — and the same ledger events.
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Consumer, Producer } from 'kafkajs';
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import type { LedgerEvent } from '../../src/core/events.js';
import { workflowStream } from '../../src/core/streams.js';
import { createRuntime, type EffectdRuntime } from '../../src/runtime/effectd-runtime.js';
import { AgentStatus, type EffectOutcome } from '../../src/sdk/index.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { startKafkaIngress, type KafkaIngress } from '../../src/transport/kafka/kafka-ingress.js';
import { kafkaIngressSettings } from '../../src/transport/kafka/kafka-settings.js';
import { decodeOutcome } from '../../src/transport/wire/outcome-codec.js';
import { authHeaders, getJson, postJson, tempDir, waitFor, writeToolsConfig } from '../support/effectd-harness.js';
import { bearer, createRunTopics, freshPostgresSchema, header, readTopic, runId, testKafka, type ReadRecord, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers } from '../support/services.js';
import { loadSettings } from '../../src/config/settings-loader.js';

type Status = 'done' | 'not_done' | 'unknown' | 'refused';
/** What a door answered, in the same terms for every door. */
interface Answer {
  status: Status;
  code?: string;
  /** For a refused conflict: where the recorded effect stands. */
  recorded?: string;
  replayed?: boolean;
}
type Command = Record<string, unknown>;

interface Door {
  name: 'http' | 'kafka' | 'mcp';
  /** `atOnce`: the answer does not wait for an inline settle (HTTP `Prefer: wait=0`, Kafka `waitMs: 0`). */
  submit(command: Command, options?: { atOnce?: boolean }): Promise<Answer>;
}

/** What a scenario may use, for one door: names of its own (workflow, invoice) and the shared parts. */
interface Run {
  door: Door;
  tag: string;
  workflowId: string;
  /** payments.charge for this door's invoice; `args` change the arguments, `fields` the command. */
  charge(args?: Record<string, unknown>, fields?: Record<string, unknown>): Command;
  /** Another attempt holding the claim: the gateway called directly, as another instance would. */
  holdClaim(command: Command): Promise<unknown>;
}

interface Scenario {
  name: string;
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

const HOLD_MS = 1_500;
const CHARGED = ['EffectDeclared', 'AttemptStarted', 'AttemptFinished'];
const AGENT = [{ principal: 'default-agent', onBehalfOf: 'customer-7' }];

const SCENARIOS: Scenario[] = [
  {
    name: 'plain effect', answers: [{ status: 'done', replayed: false }], http: [200], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => [await door.submit(charge())],
  },
  {
    name: 'replay (the same command again)', answers: [{ status: 'done', replayed: false }, { status: 'done', replayed: true }], http: [200, 200], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => [await door.submit(charge()), await door.submit(charge())],
  },
  {
    name: 'lost reply (committed, then the response dropped), settled by the resubmission',
    answers: [{ status: 'unknown', replayed: false }, { status: 'done' }], http: [200, 200],
    // The resubmission reconciles first (the lookup is not conclusive yet), then re-sends with the SAME key.
    events: [...CHARGED, 'ReconciliationChecked', 'AttemptStarted', 'AttemptFinished'], actors: AGENT,
    play: async ({ door, charge }) => {
      await arm({ type: 'drop-after-mutation' });
      // The first answer does not wait for an inline settle: the resubmission's reconcile-first is the point here.
      return [await door.submit(charge(), { atOnce: true }), await door.submit(charge())];
    },
  },
  {
    name: 'conflict (the same step, other args)', answers: [{ status: 'done', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'done' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => [await door.submit(charge()), await door.submit(charge({ amount: 1300 }))],
  },
  {
    // Refused, not not_done: the recorded effect may have happened, and the refusal says it is being checked.
    name: 'conflict while the recorded effect is unknown', answers: [{ status: 'unknown', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'unknown' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => {
      await arm({ type: 'drop-after-mutation' });
      return [await door.submit(charge(), { atOnce: true }), await door.submit(charge({ amount: 1300 }))];
    },
  },
  {
    // The one case a refusal may point to a new step: the recorded effect is proven not done.
    name: 'conflict after the recorded effect was proven not done', answers: [{ status: 'not_done', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'not_done' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => {
      await arm({ type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } } });
      return [await door.submit(charge()), await door.submit(charge({ amount: 1300 }))];
    },
  },
  {
    name: 'in-flight claim (another attempt holds it)', answers: [{ status: 'unknown' }, { status: 'done', replayed: true }], http: [409, 200], events: CHARGED, actors: AGENT,
    play: async ({ door, charge, holdClaim }) => {
      await arm({ type: 'delay', ms: HOLD_MS });
      const before = await chargesPosted();
      const holder = holdClaim(charge());
      await waitFor('the provider to receive the held charge', async () => ((await chargesPosted()) > before ? true : undefined));
      const started = Date.now();
      const during = await door.submit(charge(), { atOnce: true });
      // Asked not to wait: answered at once with the outcome (unknown), not after waiting the claim out.
      expect(Date.now() - started).toBeLessThan(HOLD_MS);
      await holder;
      return [during, await door.submit(charge())];
    },
  },
  {
    name: 'saga start (tool saga:subscription-renewal)', answers: [{ status: 'done' }], http: [200],
    events: ['SagaStarted', ...CHARGED, ...CHARGED, 'SagaFinished'],
    actors: [{ startedBy: 'default-agent' }, { principal: 'saga:subscription-renewal', onBehalfOf: undefined }, { principal: 'saga:subscription-renewal', onBehalfOf: undefined }],
    play: async ({ door, workflowId, tag }) => [await door.submit({
      workflowId, step: 'saga', tool: 'saga:subscription-renewal', principal: 'customer-7',
      args: { subscriptionId: `sub-${tag}`, period: '2027-01', email: `${tag}@example.com`, amount: '19.00' },
    })],
  },
  {
    name: 'bad input (no step)', answers: [{ status: 'refused', code: 'invalid_command' }], http: [400], events: [], actors: [], deadLetter: 'invalid_command',
    play: async ({ door, charge }) => {
      const { step: _step, ...noStep } = charge();
      return [await door.submit(noStep)];
    },
  },
  {
    name: 'forbidden tenant (the command names another one)', answers: [{ status: 'refused', code: 'forbidden' }], http: [403], events: [], actors: [], deadLetter: 'forbidden',
    play: async ({ door, charge }) => [await door.submit(charge({}, { tenant: 'victim-tenant' }))],
  },
];

let payments: RunningSimulator;
const arm = (action: Record<string, unknown>) => postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action }] });
const chargesPosted = async () => ((await getJson(`${payments.url}/_admin/requests`)).body as { requests: { method: string; path: string }[] }).requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/charges')).length;

const STATUS: Record<AgentStatus, Status> = { [AgentStatus.UNSPECIFIED]: 'unknown', [AgentStatus.DONE]: 'done', [AgentStatus.NOT_DONE]: 'not_done', [AgentStatus.UNKNOWN]: 'unknown', [AgentStatus.REFUSED]: 'refused' };

/** A refusal's text points to a new step only when the step's recorded effect is proven not done. */
function invitesNewStepOnlyIfNotDone(text: string, recorded: string | undefined): void {
  if (recorded !== 'not_done') expect(text).not.toMatch(/new step/);
}

/** What every door's refusal must not say: it is not an outcome of the effect. */
const NOT_AN_OUTCOME = /^(not_done|done|unknown)\b/;

/** Answers on the outcomes topic, by correlation id. */
class Outcomes {
  private readonly seen = new Map<string, EffectOutcome>();
  private readonly waiting = new Map<string, (outcome: EffectOutcome) => void>();
  constructor(private readonly consumer: Consumer) {}

  static async follow(topic: string): Promise<Outcomes> {
    const consumer = testKafka().consumer({ groupId: runId('parity-outcomes'), maxWaitTimeInMs: 50 });
    const outcomes = new Outcomes(consumer);
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    await consumer.run({ eachMessage: async ({ message }) => outcomes.add(decodeOutcome(message.value!.toString())) });
    await joined;
    return outcomes;
  }

  answer(correlationId: string, timeoutMs = 20_000): Promise<EffectOutcome> {
    const known = this.seen.get(correlationId);
    if (known) return Promise.resolve(known);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no outcome for ${correlationId} within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.set(correlationId, (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
    });
  }

  close = () => this.consumer.disconnect();

  private add(outcome: EffectOutcome): void {
    this.seen.set(outcome.correlationId, outcome);
    this.waiting.get(outcome.correlationId)?.(outcome);
  }
}

/** The events of a stream without what differs by nature between two runs: times, ids, keys, receipts, names of the run. */
function normalized(events: LedgerEvent[], tag: string): unknown[] {
  const VOLATILE = new Set(['at', 'askedAt', 'effectId', 'instanceId', 'providerKey', 'leaseUntil', 'keyExpiresAt', 'latencyMs', 'receipt', 'intentDigest', 'contentKey', 'asked', 'seen']);
  const text = JSON.stringify(events).replaceAll(tag, '<tag>').replace(/\b(ch|em|eff)_[A-Za-z0-9_-]+/g, '<$1>');
  return (JSON.parse(text) as Record<string, unknown>[]).map((event) => Object.fromEntries(Object.entries(event).filter(([key]) => !VOLATILE.has(key))));
}

describe('ingress parity: one table of scenarios through HTTP, Kafka and MCP', () => {
  const run = runId('parity');
  const schema = freshPostgresSchema(run);
  let email: RunningSimulator;
  let runtime: EffectdRuntime;
  let http: HttpServer;
  let topics: RunTopics;
  let ingress: KafkaIngress;
  let producer: Producer;
  let outcomes: Outcomes;
  let mcp: Client;
  let token: string;
  const kafkaLog: string[] = [];

  /** HTTP: POST /v1/effects with the agent's bearer; keeps each response's status code. */
  const httpDoor = () => {
    const codes: number[] = [];
    const door: Door = {
      name: 'http',
      async submit(command, options = {}) {
        const res = await postJson(`${http.url}/v1/effects`, command, { ...bearer(token), ...(options.atOnce ? { prefer: 'wait=0' } : {}) });
        codes.push(res.status);
        // An outcome (200, or 409 for a live claim) carries its status; a refused request (4xx) did
        // nothing and is no outcome: refused, as Kafka's REFUSED says, with the same code.
        if (typeof res.body?.status === 'string') return { status: res.body.status, replayed: res.body.replayed };
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        invitesNewStepOnlyIfNotDone(res.body.message, res.body.recorded?.status);
        return { status: 'refused', code: res.body.error, ...(res.body.recorded ? { recorded: res.body.recorded.status } : {}) };
      },
    };
    return { door, codes };
  };

  /** Kafka: the same JSON as the command's value, the agent's token in its header; keeps each correlation id. */
  const kafkaDoor = () => {
    const sent: string[] = [];
    const door: Door = {
      name: 'kafka',
      async submit(command, options = {}) {
        const correlationId = randomUUID();
        sent.push(correlationId);
        const key = typeof command.workflowId === 'string' ? command.workflowId : correlationId;
        await producer.send({ topic: topics.commands, acks: -1, messages: [{ key, value: JSON.stringify({ ...command, correlationId, ...(options.atOnce ? { waitMs: 0 } : {}) }), headers: bearer(token) }] });
        const outcome = await outcomes.answer(correlationId);
        if (outcome.error) {
          expect(outcome.message).toMatch(/^refused: /);
          const recorded = outcome.error.recorded ? { recorded: STATUS[outcome.error.recorded.status] } : {};
          invitesNewStepOnlyIfNotDone(outcome.message, recorded.recorded);
          return { status: STATUS[outcome.status], code: outcome.error.code, ...recorded };
        }
        return { status: STATUS[outcome.status], replayed: outcome.replayed };
      },
    };
    return { door, sent };
  };

  /** MCP: tools/call with the official client; the command's identity (and principal, tenant) in `_meta`, never in the arguments. */
  const mcpDoor = (): Door => ({
    name: 'mcp',
    async submit(command, options = {}) {
      const tool = String(command.tool);
      const meta: Record<string, unknown> = {
        ...(command.workflowId !== undefined ? { 'dev.effectd/workflowId': command.workflowId } : {}),
        ...(command.step !== undefined ? { 'dev.effectd/step': command.step } : {}),
        ...(command.tenant !== undefined ? { 'dev.effectd/tenant': command.tenant } : {}),
        ...(command.principal !== undefined ? { 'dev.effectd/principal': command.principal } : {}),
        ...(options.atOnce ? { 'dev.effectd/waitMs': 0 } : {}),
      };
      const name = tool.startsWith('saga:') ? `saga_${tool.slice('saga:'.length)}` : tool.replaceAll('.', '_');
      const result = await mcp.callTool({ name, arguments: command.args as Record<string, unknown>, _meta: meta });
      const body = result.structuredContent as { status?: Status; replayed?: boolean; error?: string; recorded?: { status: string } };
      const text = (result.content as { text: string }[])[0]!.text;
      if (typeof body.status === 'string') {
        // not_done is an error (safe to try again as a new step); unknown never is.
        expect(result.isError).toBe(body.status === 'not_done');
        return { status: body.status, replayed: body.replayed };
      }
      // A refusal: an error result whose text says so, never an outcome's word.
      expect(result.isError).toBe(true);
      expect(text).not.toMatch(NOT_AN_OUTCOME);
      if (body.error === 'intent_conflict' || body.error === 'invalid_command') expect(text).toMatch(/^refused: /);
      invitesNewStepOnlyIfNotDone(text, body.recorded?.status);
      return { status: 'refused', code: body.error, ...(body.recorded ? { recorded: body.recorded.status } : {}) };
    },
  });

  /** Plays a scenario through one door; what it answered and what the ledger recorded. */
  const playThrough = async (scenario: Scenario, door: Door, tag: string) => {
    const workflowId = `wf-${tag}`;
    const answers = await scenario.play({
      door, tag, workflowId,
      charge: (args = {}, fields = {}) => ({ workflowId, step: 'charge', tool: 'payments.charge', principal: 'customer-7', args: { invoiceId: `INV-${tag}`, amount: 1200, ...args }, ...fields }),
      holdClaim: (command) => runtime.gateway.submit(runtime.gateway.authenticate(token, door.name), command),
    });
    const events = (await runtime.ledger.readStream(workflowStream('default', workflowId))).map((r) => r.event);
    expect(await runtime.ledger.readStream(workflowStream('victim-tenant', workflowId))).toEqual([]);
    return {
      answers: comparable(answers, scenario.answers),
      events: normalized(events, tag),
      types: events.map((e) => e.type),
      actors: events.flatMap((e): Record<string, string | undefined>[] => (e.type === 'EffectDeclared' ? [{ principal: e.principal, onBehalfOf: e.onBehalfOf }] : e.type === 'SagaStarted' ? [{ startedBy: e.startedBy }] : [])),
    };
  };

  beforeAll(async () => {
    payments = await startSimulator('payments');
    email = await startSimulator('email');
    const dataDir = tempDir('effectd-parity-');
    // No reconciler: what settles an unknown is the resubmission, on either door, never a background race.
    runtime = await createRuntime({ dataDir, ledgerUrl: schema.url, settings: loadSettings({}), configFile: writeToolsConfig(dataDir, { payments: payments.url, email: email.url }) });
    http = await startHttpServer(runtime, 0);
    topics = await createRunTopics(run);
    const settings = kafkaIngressSettings(kafkaBrokers().join(','), loadSettings({}).kafka, { groupId: `effectd-${run}` });
    ingress = await startKafkaIngress(runtime, { ...settings, topics }, { log: (line) => kafkaLog.push(line) });
    token = authHeaders(dataDir, 'agent').authorization!.slice('Bearer '.length);
    producer = testKafka().producer();
    await producer.connect();
    outcomes = await Outcomes.follow(topics.outcomes);
    mcp = new Client({ name: 'effectd-parity', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: bearer(token) } }));
  }, 60_000);
  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await outcomes?.close();
    await producer?.disconnect();
    await ingress?.close();
    await http?.close();
    await runtime?.close();
    await topics?.drop();
    await payments?.close();
    await email?.close();
    await schema.drop();
  });

  for (const [index, scenario] of SCENARIOS.entries()) {
    it(scenario.name, async () => {
      const overHttp = httpDoor();
      const viaHttp = await playThrough(scenario, overHttp.door, `${run}-${index}-http`);
      const overKafka = kafkaDoor();
      const viaKafka = await playThrough(scenario, overKafka.door, `${run}-${index}-kafka`);
      const viaMcp = await playThrough(scenario, mcpDoor(), `${run}-${index}-mcp`);

      expect(overHttp.codes, 'HTTP status per submission').toEqual(scenario.http);
      expect(viaHttp.answers).toEqual(scenario.answers);
      expect(viaKafka.answers).toEqual(scenario.answers);
      expect(viaMcp.answers).toEqual(scenario.answers);
      expect(viaHttp.types).toEqual(scenario.events);
      expect(viaKafka.events).toEqual(viaHttp.events);
      expect(viaMcp.events).toEqual(viaHttp.events);
      expect(viaHttp.actors).toEqual(scenario.actors);
      expect(viaKafka.actors).toEqual(viaHttp.actors);
      expect(viaMcp.actors).toEqual(viaHttp.actors);
      if (scenario.deadLetter) {
        const mine = (r: ReadRecord) => overKafka.sent.some((id) => r.message.value?.toString().includes(id));
        const parked = (await readTopic(topics.deadLetters, (records) => records.filter(mine).length >= overKafka.sent.length)).filter(mine);
        expect(parked.map((r) => (JSON.parse(header(r.message.headers, 'effectd-dlq-reason')!) as { reason: string }).reason)).toEqual(overKafka.sent.map(() => scenario.deadLetter));
      }
    }, 60_000);
  }

  it('logged no handler failure or retry on the Kafka side', () => {
    expect(kafkaLog.filter((line) => /failed \(|hit a defect/.test(line))).toEqual([]);
  });
});

/** The answers as the table states them: `replayed` only where it names it. */
function comparable(answers: Answer[], expected: Answer[]): Answer[] {
  return answers.map(({ replayed, ...rest }, i) => (expected[i]?.replayed === undefined ? rest : { ...rest, replayed }));
}
