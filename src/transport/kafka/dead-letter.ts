import type { KafkaMessage } from 'kafkajs';
import type { DeadLetterReason, DeadLetterSender } from './command-verdict.js';
import type { Outgoing } from '../../shared/coalescing-publisher.js';

export const DLQ_HEADER = {
  reason: 'effectd-dlq-reason',
  topic: 'effectd-original-topic',
  partition: 'effectd-original-partition',
  offset: 'effectd-original-offset',
  timestamp: 'effectd-original-timestamp',
  /** Who sent it, when its credential was valid (a refusal for what it asked, not for who it is). */
  sender: 'effectd-sender',
  senderTenant: 'effectd-sender-tenant',
} as const;

/** What the log says of a parked command: where it sat, its workflow (the message key), where it went and why. */
export interface DeadLetterNotice {
  from: string;
  workflowId?: string;
  /** The sender's tenant and credential name, when its credential was valid. */
  tenant?: string;
  sender?: string;
  deadLetterTopic: string;
  reason: DeadLetterReason;
  detail: string;
}

/** The log's sentence for a parked command. */
export function deadLetterLine(n: DeadLetterNotice): string {
  return `${n.from} → ${n.deadLetterTopic} (${n.reason}: ${n.detail})${n.sender ? `, sent by ${n.sender} (tenant ${n.tenant})` : ''}`;
}

/**
 * A dead letter keeps the ORIGINAL bytes as its value (so it can be fixed and replayed as it was),
 * the original key, and says where it came from, why and (when known) who sent it in headers; the reason is JSON.
 */
export function deadLetter(topic: string, source: { topic: string; partition: number; message: KafkaMessage }, reason: DeadLetterReason, detail: string, now: Date, sender?: DeadLetterSender): Outgoing {
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
      ...(sender ? { [DLQ_HEADER.sender]: sender.name, [DLQ_HEADER.senderTenant]: sender.tenant } : {}),
    },
  };
}
