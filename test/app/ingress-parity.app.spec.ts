// One gateway, three front doors, in process: every scenario of one table goes through each door's
// own mapping — HTTP (Nest on Fastify, on loopback), Kafka (the command processor that turns a
// record into a verdict: an outcome, or a dead letter with its reason) and MCP (the official client
// and server over the SDK's in-memory transport) — against one application in memory. Each must
// give the same three-state status, or the same refusal with the same code, and the same ledger
// events. test/int/ingress-parity.int.spec.ts runs a part of it through the real broker and PostgreSQL.
import { randomUUID } from 'node:crypto';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import type { LedgerEvent } from '../../src/core/events.js';
import { workflowStream } from '../../src/core/streams.js';
import { buildMcpServer } from '../../src/mcp/mcp-server.js';
import { AgentStatus } from '../../src/sdk/index.js';
import { EffectCommandProcessor } from '../../src/transport/kafka/effect-command-processor.js';
import { decodeOutcome } from '../../src/transport/wire/outcome-decoder.js';
import { memoryApp, type MemoryApp } from '../support/memory-app.js';
import type { Fault } from '../support/scripted-provider.js';

type Status = 'done' | 'not_done' | 'unknown' | 'refused';
interface Answer {
  status: Status;
  code?: string;
  recorded?: string;
  replayed?: boolean;
}
type Command = Record<string, unknown>;

interface Door {
  name: 'http' | 'kafka' | 'mcp';
  /** `atOnce`: the answer does not wait for an inline settle. */
  submit(command: Command, options?: { atOnce?: boolean }): Promise<Answer>;
}

interface Run {
  door: Door;
  tag: string;
  workflowId: string;
  charge(args?: Record<string, unknown>, fields?: Record<string, unknown>): Command;
  arm(fault: Fault): void;
  /** Another attempt holding the claim: the gateway called directly, as another instance would. */
  holdClaim(command: Command): Promise<unknown>;
  charges(): number;
}

interface Scenario {
  name: string;
  answers: Answer[];
  http: number[];
  events: string[];
  actors: Record<string, string | undefined>[];
  deadLetter?: string;
  play(run: Run): Promise<Answer[]>;
}

const HOLD_MS = 600;
const CHARGED = ['EffectDeclared', 'AttemptStarted', 'AttemptFinished'];
const AGENT = [{ principal: 'default-agent', onBehalfOf: 'customer-7' }];
const DECLINED = { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } };

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
    name: 'lost reply, settled by the resubmission under the same key',
    answers: [{ status: 'unknown', replayed: false }, { status: 'done' }], http: [200, 200],
    events: [...CHARGED, 'ReconciliationChecked', 'AttemptStarted', 'AttemptFinished'], actors: AGENT,
    play: async ({ door, charge, arm }) => {
      arm({ type: 'drop-after-mutation' });
      return [await door.submit(charge(), { atOnce: true }), await door.submit(charge())];
    },
  },
  {
    name: 'conflict (the same step, other args)', answers: [{ status: 'done', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'done' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge }) => [await door.submit(charge()), await door.submit(charge({ amount: 1300 }))],
  },
  {
    name: 'conflict while the recorded effect is unknown', answers: [{ status: 'unknown', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'unknown' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge, arm }) => {
      arm({ type: 'drop-after-mutation' });
      return [await door.submit(charge(), { atOnce: true }), await door.submit(charge({ amount: 1300 }))];
    },
  },
  {
    name: 'conflict after the recorded effect was proven not done', answers: [{ status: 'not_done', replayed: false }, { status: 'refused', code: 'intent_conflict', recorded: 'not_done' }], http: [200, 422], events: CHARGED, actors: AGENT,
    play: async ({ door, charge, arm }) => {
      arm({ type: 'status', status: 402, body: DECLINED });
      return [await door.submit(charge()), await door.submit(charge({ amount: 1300 }))];
    },
  },
  {
    name: 'in-flight claim (another attempt holds it)', answers: [{ status: 'unknown' }, { status: 'done', replayed: true }], http: [409, 200], events: CHARGED, actors: AGENT,
    play: async ({ door, charge, arm, holdClaim, charges }) => {
      arm({ type: 'delay', ms: HOLD_MS });
      const holder = holdClaim(charge());
      await until(() => charges() > 0);
      const during = await door.submit(charge(), { atOnce: true });
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
    name: 'unknown tool', answers: [{ status: 'refused', code: 'unknown_tool' }], http: [400], events: [], actors: [], deadLetter: 'unknown_tool',
    play: async ({ door, charge }) => [await door.submit(charge({}, { tool: 'payments.nope' }))],
  },
  {
    name: 'forbidden tenant (the command names another one)', answers: [{ status: 'refused', code: 'forbidden' }], http: [403], events: [], actors: [], deadLetter: 'forbidden',
    play: async ({ door, charge }) => [await door.submit(charge({}, { tenant: 'victim-tenant' }))],
  },
];

const STATUS: Record<AgentStatus, Status> = { [AgentStatus.UNSPECIFIED]: 'unknown', [AgentStatus.DONE]: 'done', [AgentStatus.NOT_DONE]: 'not_done', [AgentStatus.UNKNOWN]: 'unknown', [AgentStatus.REFUSED]: 'refused' };
const NOT_AN_OUTCOME = /^(not_done|done|unknown)\b/;

function invitesNewStepOnlyIfNotDone(text: string, recorded: string | undefined): void {
  if (recorded !== 'not_done') expect(text).not.toMatch(/new step/);
}

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function normalized(events: LedgerEvent[], tag: string): unknown[] {
  const VOLATILE = new Set(['at', 'askedAt', 'effectId', 'instanceId', 'providerKey', 'leaseUntil', 'keyExpiresAt', 'latencyMs', 'receipt', 'intentDigest', 'contentKey', 'asked', 'seen']);
  const text = JSON.stringify(events).replaceAll(tag, '<tag>').replace(/\b(pa|em|eff)_[A-Za-z0-9_-]+/g, '<$1>');
  return (JSON.parse(text) as Record<string, unknown>[]).map((event) => Object.fromEntries(Object.entries(event).filter(([key]) => !VOLATILE.has(key))));
}

function comparable(answers: Answer[], expected: Answer[]): Answer[] {
  return answers.map(({ replayed, ...rest }, i) => (expected[i]?.replayed === undefined ? rest : { ...rest, replayed }));
}

describe('ingress parity in process: one table through the HTTP, Kafka and MCP mappings', () => {
  let memory: MemoryApp;
  let http: HttpServer;
  let mcp: Client;
  const kafkaLog: string[] = [];
  const topics = { commands: 'effect-commands', outcomes: 'effect-outcomes', deadLetters: 'effect-commands.dlq' };

  const httpDoor = () => {
    const codes: number[] = [];
    const door: Door = {
      name: 'http',
      async submit(command, options = {}) {
        const res = await fetch(`${http.url}/v1/effects`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${memory.tokens.agent}`, ...(options.atOnce ? { prefer: 'wait=0' } : {}) },
          body: JSON.stringify(command),
        });
        codes.push(res.status);
        const body = (await res.json()) as { status?: Status; replayed?: boolean; error?: string; message: string; recorded?: { status: string } };
        if (typeof body.status === 'string') return { status: body.status, replayed: body.replayed };
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        invitesNewStepOnlyIfNotDone(body.message, body.recorded?.status);
        return { status: 'refused', code: body.error, ...(body.recorded ? { recorded: body.recorded.status } : {}) };
      },
    };
    return { door, codes };
  };

  /** Kafka: the record a consumer would hand the processor; its verdict is what the transport does. */
  const kafkaDoor = () => {
    const deadLetters: string[] = [];
    let offset = 0;
    const processor = new EffectCommandProcessor(memory.app, topics, { log: (line) => kafkaLog.push(line) });
    const door: Door = {
      name: 'kafka',
      async submit(command, options = {}) {
        const correlationId = randomUUID();
        const key = typeof command.workflowId === 'string' ? command.workflowId : correlationId;
        const value = Buffer.from(JSON.stringify({ ...command, correlationId, ...(options.atOnce ? { waitMs: 0 } : {}) }));
        const verdict = await processor.process(
          { value, key, headers: { authorization: `Bearer ${memory.tokens.agent}` }, where: `${topics.commands}[0]@${offset++}` },
          { isActive: () => true, heartbeat: async () => undefined },
        );
        if (verdict.kind === 'dead-letter') deadLetters.push(verdict.reason);
        const reply = verdict.kind === 'answer' ? verdict.reply : verdict.kind === 'dead-letter' ? verdict.reply : undefined;
        if (!reply) throw new Error(`no reply: ${JSON.stringify(verdict)}`);
        const outcome = decodeOutcome(reply.value);
        expect(outcome.correlationId).toBe(correlationId);
        if (outcome.error) {
          expect(outcome.message).toMatch(/^refused: /);
          const recorded = outcome.error.recorded ? { recorded: STATUS[outcome.error.recorded.status] } : {};
          invitesNewStepOnlyIfNotDone(outcome.message, recorded.recorded);
          return { status: STATUS[outcome.status], code: outcome.error.code, ...recorded };
        }
        return { status: STATUS[outcome.status], replayed: outcome.replayed };
      },
    };
    return { door, deadLetters };
  };

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
      let result: Awaited<ReturnType<Client['callTool']>>;
      try {
        result = await mcp.callTool({ name, arguments: command.args as Record<string, unknown>, _meta: meta });
      } catch (error) {
        // A tool the server does not list is refused by MCP itself: a protocol error (-32602), as the spec says.
        expect(String(error)).toMatch(/Tool \S+ not found/);
        return { status: 'refused', code: 'unknown_tool' };
      }
      const body = result.structuredContent as { status?: Status; replayed?: boolean; error?: string; recorded?: { status: string } } | undefined;
      const text = (result.content as { text: string }[])[0]!.text;
      if (typeof body?.status === 'string') {
        expect(result.isError).toBe(body.status === 'not_done');
        return { status: body.status, replayed: body.replayed };
      }
      expect(result.isError).toBe(true);
      expect(text).not.toMatch(NOT_AN_OUTCOME);
      invitesNewStepOnlyIfNotDone(text, body?.recorded?.status);
      return { status: 'refused', code: body?.error, ...(body?.recorded ? { recorded: body.recorded.status } : {}) };
    },
  });

  const playThrough = async (scenario: Scenario, door: Door, tag: string) => {
    const workflowId = `wf-${tag}`;
    const invoice = `INV-${tag}`;
    const answers = await scenario.play({
      door, tag, workflowId,
      charge: (args = {}, fields = {}) => ({ workflowId, step: 'charge', tool: 'payments.charge', principal: 'customer-7', args: { invoiceId: invoice, amount: 1200, ...args }, ...fields }),
      arm: (fault) => memory.provider.arm('payments.charge', fault),
      holdClaim: (command) => memory.app.gateway.submit(memory.caller('agent', door.name), command),
      charges: () => memory.provider.objects.filter((o) => o.args.invoiceId === invoice).length,
    });
    const events = (await memory.app.ledger.readStream(workflowStream('default', workflowId))).map((r) => r.event);
    expect(await memory.app.ledger.readStream(workflowStream('victim-tenant', workflowId))).toEqual([]);
    return {
      answers: comparable(answers, scenario.answers),
      events: normalized(events, tag),
      types: events.map((e) => e.type),
      actors: events.flatMap((e): Record<string, string | undefined>[] => (e.type === 'EffectDeclared' ? [{ principal: e.principal, onBehalfOf: e.onBehalfOf }] : e.type === 'SagaStarted' ? [{ startedBy: e.startedBy }] : [])),
    };
  };

  beforeAll(async () => {
    memory = memoryApp();
    http = await startHttpServer(memory.app, 0);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await buildMcpServer(memory.app, memory.caller('agent', 'mcp')).connect(serverSide);
    mcp = new Client({ name: 'effectd-parity-app', version: '1.0.0' });
    await mcp.connect(clientSide);
  });
  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await http?.close();
    await memory?.close();
  });

  for (const [index, scenario] of SCENARIOS.entries()) {
    it(scenario.name, async () => {
      const overHttp = httpDoor();
      const viaHttp = await playThrough(scenario, overHttp.door, `${index}-http`);
      const overKafka = kafkaDoor();
      const viaKafka = await playThrough(scenario, overKafka.door, `${index}-kafka`);
      const viaMcp = await playThrough(scenario, mcpDoor(), `${index}-mcp`);

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
      expect(overKafka.deadLetters).toEqual(scenario.deadLetter ? [scenario.deadLetter] : []);
    });
  }

  it('logged no handler failure on the Kafka side', () => {
    expect(kafkaLog.filter((line) => /failed \(|hit a defect/.test(line))).toEqual([]);
  });
});
