// A broker restart (scripts/kafka/restart-broker.sh: data kept) in the middle of a stream of
// commands: every command Kafka acknowledged is executed, exactly once, without the agent re-sending.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EffectAnswer, EffectClient, EffectRequest } from '../../src/sdk/index.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, startPayments, waitFor } from '../support/effectd-harness.js';
import { freshPostgresSchema, runId, startKafkaFixture, type KafkaFixture } from '../support/kafka-harness.js';

const COMMANDS = 60;

describe('a Kafka broker restart during a run', () => {
  const run = runId('krestart');
  const schema = freshPostgresSchema(run);
  let payments: RunningSimulator;
  let client: EffectClient;
  let fixture: KafkaFixture;

  beforeAll(async () => {
    payments = await startPayments();
    fixture = await startKafkaFixture(run, schema.url, { providerUrls: { payments: payments.url } }, { env: { EFFECTD_KAFKA_SESSION_TIMEOUT_MS: '10000' }, clientTimeoutMs: 90_000 });
    ({ client } = fixture);
  }, 60_000);
  afterAll(async () => {
    await fixture?.close();
    await payments?.close();
    await schema.drop();
  });

  it('loses no accepted command: each one is charged exactly once and answered', async () => {
    const commands: EffectRequest[] = Array.from({ length: COMMANDS }, (_, i) => ({ workflowId: `wf-${run}-${i % 12}`, step: Math.floor(i / 12) + 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-${i}`, amount: 700 + i } }));
    const answers: Promise<EffectAnswer>[] = [];
    let restart: Promise<unknown> | undefined;
    for (let i = 0; i < commands.length; i++) {
      answers.push(client.submit(commands[i]!));
      if (i === COMMANDS / 3) restart = promisify(execFile)('bash', ['scripts/kafka/restart-broker.sh'], { timeout: 120_000 });
      await new Promise((r) => setTimeout(r, 100));
    }
    await restart;
    const settled = await Promise.all(answers);

    const accepted = commands.filter((_, i) => settled[i]!.accepted !== false);
    const charges = async () => {
      const { charges: list } = (await getJson(`${payments.url}/_oracle/state`)).body as { charges: { metadata: Record<string, string> }[] };
      const perInvoice = new Map<string, number>();
      for (const c of list) perInvoice.set(c.metadata.invoice_id!, (perInvoice.get(c.metadata.invoice_id!) ?? 0) + 1);
      return perInvoice;
    };
    // Without any re-send by the agent, every accepted command is executed (the answers above may
    // already say so; the provider's own records are the proof).
    const perInvoice = await waitFor('every accepted command to be charged', async () => {
      const seen = await charges();
      return accepted.every((c) => seen.get(String(c.args.invoiceId)) === 1) ? seen : undefined;
    }, 60_000, 200);
    expect([...perInvoice.values()].filter((n) => n > 1)).toEqual([]);
    expect(accepted.length).toBeGreaterThan(COMMANDS / 2);

    // An agent re-sends whatever came back unknown; the answer is then done, still one charge each.
    for (let i = 0; i < commands.length; i++) {
      if (settled[i]!.status === 'unknown') settled[i] = await client.submit(commands[i]!, { timeoutMs: 30_000 });
    }
    expect(settled.map((a) => a.status)).toEqual(commands.map(() => 'done'));
    const final = await charges();
    expect(commands.map((c) => final.get(String(c.args.invoiceId)))).toEqual(commands.map(() => 1));
    console.log(`broker restart: ${COMMANDS} commands, ${accepted.length} accepted by Kafka, ${settled.filter((a) => a.replayed).length} answered from the ledger; 0 lost, 0 duplicates`);
  }, 240_000);
});
