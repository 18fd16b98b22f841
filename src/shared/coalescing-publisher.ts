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

/** How long a message may wait for others that are on their way. */
export interface LingerOptions {
  /** The most a message waits while `more()` says others are coming (default 0: one turn of the event loop only). */
  lingerMs?: number;
  /** Whether more messages are about to be published: the ingress's commands still being decided. */
  more?: () => boolean;
}

/**
 * Group send: messages published in one turn of the event loop go out together in one produce
 * request per topic (acks from every in-sync replica), and while a request is in flight later
 * messages queue and go together in the next one. Each caller's promise resolves when ITS message
 * is acknowledged, so "publish after recorded, commit after published" holds per message while the
 * broker sees few, large requests.
 *
 * The linger is one turn of the event loop (setImmediate): what settles together — the answers of
 * one ledger group commit, the submits a fetched batch of answers set off — is sent together, and
 * nothing waits for a message that is not coming. With `lingerMs` and `more`, a message published
 * while `more()` says others are on their way waits for them up to `lingerMs`, and goes at once when
 * the last of them is published (a lone command never waits). Counted on the bench's Kafka lane
 * (docs/benchmark.md, "The Kafka path, per effect").
 */
export class CoalescingPublisher {
  private queue: Pending[] = [];
  /** A flush is scheduled or running: a message published now goes with it or with its next request. */
  private flushing = false;
  /** A linger is running: the queue goes when it ends or when nothing more is coming. */
  private lingering?: NodeJS.Timeout;
  private readonly lingerMs: number;
  private readonly more: () => boolean;

  constructor(private readonly producer: Producer, options: LingerOptions = {}) {
    this.lingerMs = options.lingerMs ?? 0;
    this.more = options.more ?? (() => false);
  }

  publish(message: Outgoing): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ message, resolve, reject });
      if (this.flushing) return;
      if (this.lingering) {
        if (this.more()) return;
        clearTimeout(this.lingering);
        this.lingering = undefined;
      } else if (this.lingerMs > 0 && this.more()) {
        this.lingering = setTimeout(() => {
          this.lingering = undefined;
          this.schedule();
        }, this.lingerMs);
        return;
      }
      this.schedule();
    });
  }

  private schedule(): void {
    this.flushing = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
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
