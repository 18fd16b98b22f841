import type { IHeaders, Message, Producer } from 'kafkajs';

export interface Outgoing {
  topic: string;
  key: Buffer | string | null;
  value: Buffer | string | null;
  headers?: IHeaders;
}

interface Pending {
  message: Outgoing;
  resolve(): void;
  reject(error: unknown): void;
}

const MAX_PER_SEND = 2_000;

/**
 * Group send: while one produce request is in flight, later messages queue and go out together in
 * the next one (one request per topic, acks from every in-sync replica). Each caller's promise
 * resolves when ITS message is acknowledged, so "publish after recorded, commit after published"
 * holds per message while the broker sees few, large requests.
 */
export class CoalescingPublisher {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(private readonly producer: Producer) {}

  publish(message: Outgoing): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ message, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_PER_SEND);
        const byTopic = new Map<string, Pending[]>();
        for (const pending of batch) {
          const list = byTopic.get(pending.message.topic) ?? [];
          list.push(pending);
          byTopic.set(pending.message.topic, list);
        }
        // One topic failing (say a reply topic that doesn't exist) must not fail the others.
        await Promise.all([...byTopic].map(async ([topic, list]) => {
          try {
            await this.producer.send({ topic, acks: -1, messages: list.map((p) => toKafka(p.message)) });
            for (const p of list) p.resolve();
          } catch (error) {
            for (const p of list) p.reject(error);
          }
        }));
      }
    } finally {
      this.flushing = false;
    }
  }
}

function toKafka(message: Outgoing): Message {
  return { key: message.key, value: message.value, ...(message.headers ? { headers: message.headers } : {}) };
}
