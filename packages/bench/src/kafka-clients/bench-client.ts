/** The few operations the echo bench needs from a Kafka client; one adapter per candidate. */
export interface OutRecord {
  key: Buffer;
  value: Buffer;
  headers: Record<string, Buffer>;
}

export interface InRecord {
  topic: string;
  partition: number;
  /** Kafka's offset of this record, as a decimal string (kafkajs's spelling). */
  offset: string;
  key: Buffer | undefined;
  value: Buffer | undefined;
  header(name: string): Buffer | undefined;
}

export interface Subscription {
  groupId: string;
  topic: string;
  /** Called with each fetched partition batch; the records are admitted, not done, when it returns. */
  onBatch(records: InRecord[]): void;
}

export interface BenchClient {
  /** One produce request per call, acks from every in-sync replica. */
  send(topic: string, records: OutRecord[]): Promise<void>;
  /** Joins the group (from the earliest offset when it has none committed); resolves once it has its partitions. */
  subscribe(subscription: Subscription): Promise<void>;
  /** Commits next-offsets of the subscribed group. */
  commit(offsets: { topic: string; partition: number; offset: string }[]): Promise<void>;
  close(): Promise<void>;
}

/** `kafkajs-encoder`: kafkajs with effectd's Encoder patch (kafkajs-encoder-fix.ts). */
export const CLIENT_NAMES = ['kafkajs', 'kafkajs-encoder', 'platformatic', 'confluent'] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

export async function openClient(name: ClientName, brokers: string[], clientId: string): Promise<BenchClient> {
  switch (name) {
    case 'kafkajs':
      return (await import('./kafkajs-bench-client.js')).openKafkajs(brokers, clientId);
    case 'kafkajs-encoder':
      await import('./kafkajs-encoder-fix.js');
      return (await import('./kafkajs-bench-client.js')).openKafkajs(brokers, clientId);
    case 'platformatic':
      return (await import('./platformatic-bench-client.js')).openPlatformatic(brokers, clientId);
    case 'confluent':
      return (await import('./confluent-bench-client.js')).openConfluent(brokers, clientId);
  }
}

/**
 * Records sent in one turn of the event loop go in one request per topic; while a request is in
 * flight later ones queue for the next (as effectd's CoalescingPublisher, without its linger).
 */
export class Coalescer {
  private queue: { topic: string; record: OutRecord; done: (error?: unknown) => void }[] = [];
  private flushing = false;

  constructor(private readonly client: BenchClient) {}

  send(topic: string, record: OutRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ topic, record, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (this.flushing) return;
      this.flushing = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        const byTopic = new Map<string, typeof batch>();
        for (const item of batch) {
          const list = byTopic.get(item.topic);
          if (list) list.push(item);
          else byTopic.set(item.topic, [item]);
        }
        await Promise.all([...byTopic].map(async ([topic, items]) => {
          try {
            await this.client.send(topic, items.map((i) => i.record));
            for (const i of items) i.done();
          } catch (error) {
            for (const i of items) i.done(error ?? new Error('send failed'));
          }
        }));
      }
    } finally {
      this.flushing = false;
    }
  }
}
