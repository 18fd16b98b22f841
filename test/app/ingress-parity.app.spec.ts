// One gateway, three front doors, in process: every scenario of the parity table
// (test/support/ingress-parity.ts) goes through each door's own mapping — HTTP (Nest on Fastify, on
// loopback), Kafka (the command processor that turns a record into a verdict: an outcome, or a dead
// letter with its reason) and MCP (the official client and server over the SDK's in-memory
// transport) — against one application in memory (test/support/memory-app.ts). Each must give the
// same three-state status, or the same refusal with the same code, and the same ledger events.
import { randomUUID } from 'node:crypto';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import { buildMcpServer } from '../../src/mcp/mcp-server.js';
import { EffectCommandProcessor } from '../../src/transport/kafka/effect-command-processor.js';
import { decodeOutcome } from '../../src/transport/wire/outcome-decoder.js';
import { expectParity, httpAnswer, kafkaAnswer, mcpAnswer, mcpCall, playThrough, SCENARIOS, type Door, type Tier } from '../support/ingress-parity.js';
import { memoryApp, type MemoryApp } from '../support/memory-app.js';

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
        return httpAnswer(res.status, (await res.json()) as Parameters<typeof httpAnswer>[1]);
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
        return kafkaAnswer(outcome);
      },
    };
    return { door, deadLetters };
  };

  const mcpDoor = (): Door => ({
    name: 'mcp',
    async submit(command, options = {}) {
      let result: Awaited<ReturnType<Client['callTool']>>;
      try {
        result = await mcp.callTool(mcpCall(command, options.atOnce));
      } catch (error) {
        // A tool the server does not list is refused by MCP itself: a protocol error (-32602), as the spec says.
        expect(String(error)).toMatch(/Tool \S+ not found/);
        return { status: 'refused', code: 'unknown_tool' };
      }
      return mcpAnswer(result);
    },
  });

  const tier = (): Tier => ({
    ledger: memory.app.ledger,
    arm: async (fault) => memory.provider.arm('payments.charge', fault),
    holdClaim: (door, command) => memory.app.gateway.submit(memory.caller('agent', door), command),
    charges: async (invoice) => memory.provider.objects.filter((o) => o.args.invoiceId === invoice).length,
    holdMs: 600,
  });

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
      const viaHttp = await playThrough(scenario, overHttp.door, `${index}-http`, tier());
      const overKafka = kafkaDoor();
      const viaKafka = await playThrough(scenario, overKafka.door, `${index}-kafka`, tier());
      const viaMcp = await playThrough(scenario, mcpDoor(), `${index}-mcp`, tier());

      expectParity(scenario, { ...viaHttp, codes: overHttp.codes }, viaKafka, viaMcp);
      expect(overKafka.deadLetters).toEqual(scenario.deadLetter ? [scenario.deadLetter] : []);
    });
  }

  it('logged no handler failure on the Kafka side', () => {
    expect(kafkaLog.filter((line) => /failed \(|hit a defect/.test(line))).toEqual([]);
  });
});
