import type { InRecord } from './bench-client.js';

/** A partition batch as KafkaJS's `eachBatch` hands it — and Confluent's KafkaJS-compatible API. */
export interface KafkajsShapedBatch {
  topic: string;
  partition: number;
  messages: { offset: string; key: Buffer | null; value: Buffer | null; headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined> }[];
}

/** The batch's records as the echo bench reads them (a header sent several times: its first value). */
export function recordsOfBatch(batch: KafkajsShapedBatch): InRecord[] {
  return batch.messages.map((m) => ({
    topic: batch.topic, partition: batch.partition, offset: m.offset, key: m.key ?? undefined, value: m.value ?? undefined,
    header: (name: string) => headerOf(m.headers, name),
  }));
}

function headerOf(headers: KafkajsShapedBatch['messages'][number]['headers'], name: string): Buffer | undefined {
  const value = headers?.[name];
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined ? undefined : typeof one === 'string' ? Buffer.from(one) : one;
}
