// The Kafka ingress commits offsets on an interval, off the per-effect path (kafka-command-server.ts):
// an instance that dies after its commands were settled and answered, but before their offsets
// were committed, leaves them to be delivered again. On the real broker and PostgreSQL: effectd
// answers, is SIGKILLed, the group's offsets stand where that crash can leave them (before the
// commands: set there while the group is empty, so the test does not depend on when the last
// commit happened to land), and a new instance reads every command again. Each redelivered command
// is answered again from the ledger (replayed, the same receipt), the provider is not called a
// second time, and the offsets end committed past every command.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSimulator, simulatorCall, type SimulatorProcess } from '../../packages/simulators/src/process.js';
import { EffectClient, type EffectRequest } from '../../src/sdk/index.js';
import { decodeOutcome } from '../../src/transport/wire/outcome-decoder.js';
import { ensureBuilt, tempDir, waitFor, writeFastPaymentsConfig } from '../support/effectd-harness.js';
import { createRunTopics, freshPostgresSchema, header, readTopic, runId, spawnKafkaEffectd, withAdmin, writeCredentials, type KafkaEffectdProcess, type RunTopics } from '../support/kafka-harness.js';
import { kafkaBrokers } from '../support/services.js';

const COMMANDS = 24;

describe('a crash between settle and commit (real broker, PostgreSQL)', () => {
  const run = runId('kcommit');
  const schema = freshPostgresSchema(run);
  const group = `effectd-${run}`;
  let topics: RunTopics;
  let payments: SimulatorProcess;
  let client: EffectClient | undefined;
  let args: string[];
  let env: Record<string, string>;
  const instances: KafkaEffectdProcess[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    topics = await createRunTopics(run);
    payments = await spawnSimulator('payments');
    const dir = tempDir();
    const credentials = writeCredentials(dir);
    env = {
      EFFECTD_SECRET: randomBytes(32).toString('hex'),
      EFFECTD_CREDENTIALS: credentials.file,
      EFFECTD_KAFKA_COMMANDS_TOPIC: topics.commands,
      EFFECTD_KAFKA_OUTCOMES_TOPIC: topics.outcomes,
      EFFECTD_KAFKA_DLQ_TOPIC: topics.deadLetters,
      EFFECTD_KAFKA_SESSION_TIMEOUT_MS: '6000',
    };
    args = ['--group', group, '--ledger', schema.url, '--config', writeFastPaymentsConfig(dir, payments.url, 5_000)];
    instances.push(await spawnKafkaEffectd([...args, '--data-dir', tempDir()], env));
    client = await EffectClient.connect({ brokers: kafkaBrokers(), token: credentials.agentToken, commandsTopic: topics.commands, outcomesTopic: topics.outcomes, timeoutMs: 30_000 });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    for (const instance of instances) await instance.kill('SIGTERM');
    await payments?.stop();
    await topics?.drop();
    await schema.drop();
  });

  it('redelivers what was settled but not committed; the replay answers from the ledger, no second charge', async () => {
    const commands: EffectRequest[] = Array.from({ length: COMMANDS }, (_, i) => ({
      workflowId: `wf-${run}-${i}`, step: 1, tool: 'payments.charge', principal: 'agent:commit-test', args: { invoiceId: `INV-${run}-${i}`, amount: 1000 + i },
    }));
    const first = await Promise.all(commands.map((c) => client!.submit(c)));
    expect(first.map((a) => [a.status, a.replayed])).toEqual(commands.map(() => ['done', false]));

    // The crash: no drain, no last commit.
    await instances[0]!.kill('SIGKILL');
    // Its offsets as the crash may leave them: before every command (the group must be empty to set them).
    await waitFor('the group to notice the dead member', () => withAdmin(async (admin) => {
      const { groups } = await admin.describeGroups([group]);
      return groups[0]?.state === 'Empty' ? true : undefined;
    }), 30_000, 200);
    await withAdmin((admin) => admin.resetOffsets({ groupId: group, topic: topics.commands, earliest: true }));

    instances.push(await spawnKafkaEffectd([...args, '--data-dir', tempDir()], env));

    // Every command answered twice on the outcomes topic: first executed, then replayed from the ledger with the same receipt.
    const records = await readTopic(topics.outcomes, (rs) => rs.length >= 2 * COMMANDS, 60_000);
    const byCorrelation = new Map<string, { replayed: boolean; receipt: string; status: number }[]>();
    for (const { message } of records) {
      const outcome = decodeOutcome(message.value!.toString());
      expect(header(message.headers, 'effectd-correlation-id')).toBe(outcome.correlationId);
      byCorrelation.set(outcome.correlationId, [...(byCorrelation.get(outcome.correlationId) ?? []), { replayed: outcome.replayed, receipt: outcome.receipt, status: outcome.status }]);
    }
    expect(byCorrelation.size).toBe(COMMANDS);
    for (const answer of first) {
      const answers = byCorrelation.get(answer.correlationId)!;
      expect(answers.map((a) => a.replayed)).toEqual([false, true]);
      expect(answers.map((a) => a.receipt)).toEqual([answer.receipt, answer.receipt]);
      expect(answers[0]!.status).toBe(answers[1]!.status);
    }

    // Ground truth: one charge per command at the provider.
    const oracle = await simulatorCall<{ charges: { metadata: Record<string, string> }[] }>(payments.url, '/_oracle/state');
    const ours = oracle.charges.filter((c) => String(c.metadata.invoice_id).startsWith(`INV-${run}-`));
    expect(ours).toHaveLength(COMMANDS);
    expect(new Set(ours.map((c) => c.metadata.invoice_id)).size).toBe(COMMANDS);

    // And the new instance commits past every command.
    const ends = await withAdmin((admin) => admin.fetchTopicOffsets(topics.commands));
    await waitFor('the offsets to be committed past every command', () => withAdmin(async (admin) => {
      const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [topics.commands] });
      const committed = new Map(offsets!.partitions.map((p) => [p.partition, p.offset]));
      return ends.every((e) => e.high === '0' || committed.get(e.partition) === e.high) ? true : undefined;
    }), 15_000, 100);
  }, 120_000);
});
