import { EffectdError } from '../../core/errors.js';
import type { Caller } from '../../gateway/caller.js';
import type { KafkaTopics } from './kafka-settings.js';

/**
 * Why the caller may not have outcomes written to this replyTopic, or undefined when it may: the
 * ingress's own outcomes topic, or a topic under the credential's `replyTopicPrefix` — never
 * effectd's commands or dead-letter topic, whatever the prefix.
 */
export function replyTopicRefusal(replyTopic: string | undefined, caller: Caller, topics: KafkaTopics): EffectdError | undefined {
  if (replyTopic === undefined || replyTopic === topics.outcomes) return undefined;
  const prefix = caller.replyTopicPrefix;
  const own = replyTopic === topics.commands || replyTopic === topics.deadLetters;
  if (!own && prefix !== undefined && replyTopic.startsWith(prefix)) return undefined;
  const allowed = prefix !== undefined
    ? `${topics.outcomes} or a topic starting with ${prefix}`
    : `${topics.outcomes} only (credential ${caller.name} has no replyTopicPrefix; an operator can add one in the credentials file)`;
  const why = own ? `${replyTopic} is effectd's own ${replyTopic === topics.commands ? 'commands' : 'dead-letter'} topic` : `${caller.name} may not write ${replyTopic}`;
  return new EffectdError('forbidden', `replyTopic refused: ${why}; the allowed reply topics are ${allowed}. Leave replyTopic out to read answers from ${topics.outcomes}`, { replyTopic, allowedPrefix: prefix ?? null });
}
