import { Kafka, logLevel, type Admin } from 'kafkajs';
import '../shared/kafkajs-idle-fix.js';
import type { PromMetrics } from './prom-metrics.js';

export interface PartitionLag {
  topic: string;
  partition: number;
  /** Messages written to the partition that the group has not committed yet. */
  lag: number;
}

/** The minimal admin surface the lag needs (kafkajs Admin satisfies it). */
export type OffsetsAdmin = Pick<Admin, 'fetchTopicOffsets' | 'fetchOffsets'>;

/**
 * Lag per partition = high watermark − the group's committed offset. A partition the group never
 * committed on counts from the low watermark: everything still retained there is unconsumed.
 */
export async function consumerLag(admin: OffsetsAdmin, groupId: string, topics: string[]): Promise<PartitionLag[]> {
  const committed = new Map<string, number>();
  for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics })) {
    for (const { partition, offset } of partitions) committed.set(`${topic}/${partition}`, Number(offset));
  }
  const lags: PartitionLag[] = [];
  for (const topic of topics) {
    for (const { partition, high, low } of await admin.fetchTopicOffsets(topic)) {
      const at = committed.get(`${topic}/${partition}`) ?? -1;
      const from = at >= 0 ? at : Number(low);
      lags.push({ topic, partition, lag: Math.max(0, Number(high) - from) });
    }
  }
  return lags.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
}

export interface KafkaLagWatch {
  brokers: string[];
  groupId: string;
  topics: string[];
  clientId?: string;
  /** How long one measurement may take before the scrape goes on without it (default 2 s). */
  timeoutMs?: number;
  /** Where a failed measurement is said (the CLI's logger). */
  log: (line: string) => void;
}

/**
 * Measures the consumer group's lag on every scrape of `metrics`, through one admin connection.
 * A failed measurement leaves the lag series out (and says so once per failure streak).
 */
export function watchKafkaLag(metrics: PromMetrics, watch: KafkaLagWatch): { close(): Promise<void> } {
  const { log } = watch;
  const admin = new Kafka({ clientId: watch.clientId ?? `effectd-lag-${process.pid}`, brokers: watch.brokers, logLevel: logLevel.NOTHING, retry: { retries: 1 } }).admin();
  let connected: Promise<void> | undefined;
  let failing = false;
  const measure = async () => {
    connected ??= admin.connect().catch((error: unknown) => {
      connected = undefined;
      throw error;
    });
    await connected;
    return consumerLag(admin, watch.groupId, watch.topics);
  };
  const remove = metrics.beforeScrape(async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${watch.timeoutMs ?? 2_000} ms`)), watch.timeoutMs ?? 2_000);
    });
    try {
      metrics.setKafkaLag(await Promise.race([measure(), timeout]));
      if (failing) log('effectd metrics: Kafka consumer lag measurable again');
      failing = false;
    } catch (error) {
      metrics.setKafkaLag(undefined);
      if (!failing) log(`effectd metrics: cannot measure Kafka consumer lag of group ${watch.groupId}: ${(error as Error).message}`);
      failing = true;
    } finally {
      clearTimeout(timer);
    }
  });
  return {
    close: async () => {
      remove();
      if (connected) await admin.disconnect().catch(() => {});
    },
  };
}
