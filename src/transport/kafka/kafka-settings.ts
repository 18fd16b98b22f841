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
}

export const DEFAULT_TOPICS: KafkaTopics = { commands: 'effectd.commands', outcomes: 'effectd.outcomes', deadLetters: 'effectd.dlq' };
export const DEFAULT_GROUP = 'effectd';

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new EffectdError('invalid_config', `${name} must be a positive integer, not "${raw}"`);
  return value;
}

/**
 * Settings from flags, then EFFECTD_KAFKA_* environment variables, then defaults:
 * EFFECTD_KAFKA_GROUP, EFFECTD_KAFKA_COMMANDS_TOPIC, EFFECTD_KAFKA_OUTCOMES_TOPIC, EFFECTD_KAFKA_DLQ_TOPIC,
 * EFFECTD_KAFKA_MAX_IN_FLIGHT (256), EFFECTD_KAFKA_SESSION_TIMEOUT_MS (30000).
 */
export function kafkaIngressSettings(brokers: string, overrides: { groupId?: string; clientId?: string } = {}, env: NodeJS.ProcessEnv = process.env): KafkaIngressSettings {
  const list = brokers.split(',').map((b) => b.trim()).filter(Boolean);
  if (list.length === 0) throw new EffectdError('invalid_config', '--kafka needs at least one broker, e.g. 127.0.0.1:9092');
  const sessionTimeoutMs = intFrom(env, 'EFFECTD_KAFKA_SESSION_TIMEOUT_MS', 30_000);
  return {
    brokers: list,
    clientId: overrides.clientId ?? `effectd-${process.pid}`,
    groupId: overrides.groupId ?? env.EFFECTD_KAFKA_GROUP ?? DEFAULT_GROUP,
    topics: {
      commands: env.EFFECTD_KAFKA_COMMANDS_TOPIC || DEFAULT_TOPICS.commands,
      outcomes: env.EFFECTD_KAFKA_OUTCOMES_TOPIC || DEFAULT_TOPICS.outcomes,
      deadLetters: env.EFFECTD_KAFKA_DLQ_TOPIC || DEFAULT_TOPICS.deadLetters,
    },
    maxInFlight: intFrom(env, 'EFFECTD_KAFKA_MAX_IN_FLIGHT', 256),
    partitionsConsumedConcurrently: intFrom(env, 'EFFECTD_KAFKA_PARTITIONS_CONCURRENTLY', 6),
    sessionTimeoutMs,
    heartbeatIntervalMs: Math.max(100, Math.min(3_000, Math.floor(sessionTimeoutMs / 5))),
  };
}
