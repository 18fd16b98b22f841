import type { Settings } from '../../config/settings-loader.js';
import { EffectdError } from '../../core/errors.js';
export interface KafkaTopics {
  commands: string;
  outcomes: string;
  deadLetters: string;
}

export interface KafkaIngressSettings {
  brokers: string[];
  clientId: string;
  /** The consumer group every effectd instance of one deployment joins (exactly this name, no suffix). */
  groupId: string;
  topics: KafkaTopics;
  /** Commands one instance works on at once, across its partitions. */
  maxInFlight: number;
  partitionsConsumedConcurrently: number;
  /** How soon the group notices a dead instance and hands its partitions to the others. */
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** How long the ledger may take no writes before this instance leaves the group (ledger-gate.ts). */
  ledgerOutageMs: number;
  /** The largest command message (EFFECTD_BODY_LIMIT_BYTES, the same limit as an HTTP body): larger is dead-lettered `too_large`. */
  maxCommandBytes: number;
}

/**
 * The Kafka ingress's settings: the brokers of `--kafka BROKERS`, the rest from the settings
 * (EFFECTD_KAFKA_*, --group: Settings.kafka, checked by the settings loader); `overrides` for tests
 * and harnesses that run several groups in one process.
 */
export function kafkaIngressSettings(brokers: string, kafka: Settings['kafka'], overrides: { groupId?: string; clientId?: string } = {}): KafkaIngressSettings {
  const list = brokers.split(',').map((b) => b.trim()).filter(Boolean);
  if (list.length === 0) throw new EffectdError('invalid_config', '--kafka needs at least one broker, e.g. 127.0.0.1:9092');
  return {
    brokers: list,
    clientId: overrides.clientId ?? `effectd-${process.pid}`,
    groupId: overrides.groupId ?? kafka.groupId,
    topics: { ...kafka.topics },
    maxInFlight: kafka.maxInFlight,
    partitionsConsumedConcurrently: kafka.partitionsConcurrently,
    sessionTimeoutMs: kafka.sessionTimeoutMs,
    ledgerOutageMs: kafka.ledgerOutageMs,
    heartbeatIntervalMs: Math.max(100, Math.min(3_000, Math.floor(kafka.sessionTimeoutMs / 5))),
    maxCommandBytes: kafka.maxCommandBytes,
  };
}
