// Consumer lag on the real broker (npm run services:up): the measurement itself, its export through
// /metrics, and `effectd start --kafka` exporting it for the group it consumes as.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerLag, watchKafkaLag } from '../../src/metrics/kafka-lag.js';
import { METRIC } from '../../src/metrics/metric-names.js';
import { PromMetrics } from '../../src/metrics/prom-metrics.js';
import { ensureBuilt, getJson, spawnEffectd, tempDir, waitFor, type EffectdProcess } from '../support/effectd-harness.js';
import { createRunTopics, runId, testKafka, withAdmin, type RunTopics } from '../support/kafka-harness.js';
import { parsePromText, total } from '../support/prom-text.js';
import { kafkaBrokers } from '../support/services.js';

describe('Kafka consumer lag', () => {
  const run = runId('lag');
  const group = `effectd-${run}`;
  let topics: RunTopics;

  beforeAll(async () => {
    topics = await createRunTopics(run);
    const producer = testKafka().producer();
    await producer.connect();
    const message = (i: number) => ({ key: `wf-${i}`, value: Buffer.from('not a command') });
    await producer.send({ topic: topics.idle, messages: [1, 2, 3, 4, 5].map((i) => ({ ...message(i), partition: 0 })) });
    await producer.send({ topic: topics.commands, messages: [1, 2, 3].map((i) => ({ ...message(i), partition: 2 })) });
    await producer.disconnect();
  });
  afterAll(async () => {
    await topics?.drop();
  });

  it('is high watermark minus the committed offset per partition; a partition never committed counts from its low watermark', async () => {
    await withAdmin((admin) => admin.setOffsets({ groupId: group, topic: topics.idle, partitions: [{ partition: 0, offset: '2' }] }));
    const lags = await withAdmin((admin) => consumerLag(admin, group, [topics.idle, topics.commands]));
    expect(lags.filter((l) => l.topic === topics.idle)).toEqual([{ topic: topics.idle, partition: 0, lag: 3 }]);
    const commands = lags.filter((l) => l.topic === topics.commands);
    expect(commands.map((l) => l.partition)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(commands.map((l) => l.lag)).toEqual([0, 0, 3, 0, 0, 0]);
  });

  it('is exported on scrape as effectd_kafka_consumer_lag{topic,partition}; an unreachable broker leaves it out without stalling the scrape', async () => {
    const metrics = new PromMetrics();
    const watch = watchKafkaLag(metrics, { brokers: kafkaBrokers(), groupId: group, topics: [topics.idle], log: () => {} });
    try {
      expect(parsePromText(await metrics.scrape()).filter((s) => s.name === METRIC.kafkaConsumerLag)).toEqual([{ name: METRIC.kafkaConsumerLag, labels: { topic: topics.idle, partition: '0' }, value: 3 }]);
    } finally {
      await watch.close();
    }
    const lines: string[] = [];
    const dead = watchKafkaLag(metrics, { brokers: ['127.0.0.1:9'], groupId: group, topics: [topics.idle], timeoutMs: 500, log: (l) => lines.push(l) });
    try {
      const started = Date.now();
      expect(parsePromText(await metrics.scrape()).some((s) => s.name === METRIC.kafkaConsumerLag)).toBe(false);
      await metrics.scrape();
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/cannot measure Kafka consumer lag/);
    } finally {
      await dead.close();
    }
  });

  describe('effectd start --kafka', () => {
    let effectd: EffectdProcess;
    beforeAll(async () => {
      await ensureBuilt();
      effectd = await spawnEffectd(['--data-dir', tempDir(), '--kafka', kafkaBrokers().join(','), '--group', group], {
        EFFECTD_KAFKA_COMMANDS_TOPIC: topics.commands, EFFECTD_KAFKA_OUTCOMES_TOPIC: topics.outcomes, EFFECTD_KAFKA_DLQ_TOPIC: topics.deadLetters,
      });
    }, 60_000);
    afterAll(async () => {
      await effectd?.kill('SIGTERM');
    });

    it('exports the lag of its group on its commands topic, which drains to 0 as it consumes', async () => {
      const lag = await waitFor('the lag of every commands partition, drained', async () => {
        const samples = parsePromText((await getJson(`${effectd.url}/metrics`)).body).filter((s) => s.name === METRIC.kafkaConsumerLag);
        return samples.length === 6 && total(samples, METRIC.kafkaConsumerLag) === 0 ? samples : undefined;
      }, 30_000, 250);
      expect(new Set(lag.map((s) => s.labels.topic))).toEqual(new Set([topics.commands]));
      // The three messages (no credential, and no command either) went to the dead-letter topic and were committed.
      const metrics = parsePromText((await getJson(`${effectd.url}/metrics`)).body);
      expect(total(metrics, METRIC.commandsDeadLettered)).toBe(3);
    }, 60_000);
  });
});
