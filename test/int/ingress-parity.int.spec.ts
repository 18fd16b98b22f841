// One gateway, three front doors, over the real transports: the scenarios of the parity table
// (test/support/ingress-parity.ts) a transport could change run through HTTP, through Kafka (the
// real broker, npm run services:up) and through MCP (the official client, Streamable HTTP) against
// one effectd runtime on PostgreSQL and the payments simulator, and must get the same three-state
// status — or the same refusal, with the same error code — the same ledger events, and for Kafka
// the same dead-letter reason on the real topic. The whole table runs in process in the app tier.
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Consumer, Producer } from 'kafkajs';
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import { createRuntime, type EffectdRuntime } from '../../src/runtime/effectd-runtime.js';
import type { EffectOutcome } from '../../src/sdk/index.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { startKafkaIngress, type KafkaIngress } from '../../src/transport/kafka/kafka-ingress.js';
import { kafkaIngressSettings } from '../../src/transport/kafka/kafka-settings.js';
import { decodeOutcome } from '../../src/transport/wire/outcome-codec.js';
import { authHeaders, getJson, postJson, tempDir, waitFor, writeToolsConfig } from '../support/effectd-harness.js';
import { bearer, createRunTopics, freshPostgresSchema, header, readTopic, runId, testKafka, type ReadRecord, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers } from '../support/services.js';
import { expectParity, httpAnswer, kafkaAnswer, mcpAnswer, mcpCall, playThrough, SCENARIOS, type Door, type Tier } from '../support/ingress-parity.js';
import { loadSettings } from '../../src/config/settings-loader.js';

const HOLD_MS = 1_500;

let payments: RunningSimulator;
const chargesPosted = async () => ((await getJson(`${payments.url}/_admin/requests`)).body as { requests: { method: string; path: string }[] }).requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/charges')).length;

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
        return httpAnswer(res.status, res.body);
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
        return kafkaAnswer(outcome);
      },
    };
    return { door, sent };
  };

  /** MCP: tools/call with the official client; the command's identity (and principal, tenant) in `_meta`, never in the arguments. */
  const mcpDoor = (): Door => ({
    name: 'mcp',
    async submit(command, options = {}) {
      return mcpAnswer(await mcp.callTool(mcpCall(command, options.atOnce)));
    },
  });

  const tier = (): Tier => ({
    ledger: runtime.ledger,
    arm: async (action) => {
      await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action }] });
    },
    holdClaim: (door, command) => runtime.gateway.submit(runtime.gateway.authenticate(token, door), command),
    // The simulator's request log: every charge posted (the scenario compares before and after).
    charges: chargesPosted,
    holdMs: HOLD_MS,
  });

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

  // The scenarios a transport could change; the rest (refusals decided before any transport work)
  // run through the same mappings in test/app/ingress-parity.app.spec.ts.
  for (const [index, scenario] of SCENARIOS.entries()) {
    if (!scenario.real) continue;
    it(scenario.name, async () => {
      const overHttp = httpDoor();
      const viaHttp = await playThrough(scenario, overHttp.door, `${run}-${index}-http`, tier());
      const overKafka = kafkaDoor();
      const viaKafka = await playThrough(scenario, overKafka.door, `${run}-${index}-kafka`, tier());
      const viaMcp = await playThrough(scenario, mcpDoor(), `${run}-${index}-mcp`, tier());

      expectParity(scenario, { ...viaHttp, codes: overHttp.codes }, viaKafka, viaMcp);
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
