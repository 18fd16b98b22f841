import type { KafkaMessage } from 'kafkajs';
import type { DeadLetterReason } from './command-verdict.js';
import type { Outgoing } from './coalescing-publisher.js';

export const DLQ_HEADER = {
  reason: 'effectd-dlq-reason',
  topic: 'effectd-original-topic',
  partition: 'effectd-original-partition',
  offset: 'effectd-original-offset',
  timestamp: 'effectd-original-timestamp',
} as const;

/** What the log says of a parked command: where it sat, its workflow (the message key), where it went and why. */
export interface DeadLetterNotice {
  from: string;
  workflowId?: string;
  deadLetterTopic: string;
  reason: DeadLetterReason;
  detail: string;
}

/**
 * A dead letter keeps the ORIGINAL bytes as its value (so it can be fixed and replayed as it was),
 * the original key, and says where it came from and why in headers; the reason is JSON.
 */
export function deadLetter(topic: string, source: { topic: string; partition: number; message: KafkaMessage }, reason: DeadLetterReason, detail: string, now: Date): Outgoing {
  return {
    topic,
    key: source.message.key ?? null,
    value: source.message.value,
    headers: {
      [DLQ_HEADER.reason]: JSON.stringify({ reason, detail, at: now.toISOString() }),
      [DLQ_HEADER.topic]: source.topic,
      [DLQ_HEADER.partition]: String(source.partition),
      [DLQ_HEADER.offset]: source.message.offset,
      [DLQ_HEADER.timestamp]: source.message.timestamp,
    },
  };
}
