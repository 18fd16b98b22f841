import type { IHeaders } from 'kafkajs';
import { asEffectdError, EffectdError } from '../../core/errors.js';
import type { Caller, Gateway } from '../../gateway/gateway.js';
import { decodeCommand, type CommandEnvelope, type DecodedCommand } from '../wire/command-codec.js';
import { encodeOutcome, encodeRefusal } from '../wire/outcome-codec.js';
import { recordedEffectOf } from '../wire/refusal.js';
import { backoffMs, pauseWhile } from './backoff.js';
import { authenticateCommand } from './command-credential.js';
import type { CommandLease, CommandVerdict, DeadLetterReason, Reply } from './command-verdict.js';
import { verdictFor, type Refuse } from './error-verdict.js';
import type { KafkaTopics } from './kafka-settings.js';
import { replyTopicRefusal } from './reply-topic.js';
import { withTraceFrom } from '../../tracing/index.js';

export interface ProcessorOptions {
  /** Failed tries (ledger or provider plumbing) after which the ledger is probed: healthy → the message is poison. */
  poisonAfterTries?: number;
  log?: (line: string) => void;
  /** The largest command message (EFFECTD_BODY_LIMIT_BYTES, as an HTTP body; default 1 MiB): larger is dead-lettered `too_large`, nothing recorded. */
  maxCommandBytes?: number;
}

/** One consumed command as the processor sees it: its bytes, key and headers, and where it sits (for logs). */
export interface CommandRecord {
  value: Buffer | null;
  key?: string;
  headers?: IHeaders;
  /** `topic[partition]@offset` */
  where: string;
}

/** All the processor asks about the ledger: whether it answers, to tell a poison message from an outage (the application's health). */
export interface LedgerHealth {
  ledgerReachable(): Promise<boolean>;
}

/**
 * One Kafka command from bytes to verdict, as a thin transport over the gateway: decode (proto3
 * JSON), authenticate the sender by the credential in its `authorization` header, check its reply
 * topic, submit through the gateway, and say what to publish. Errors become verdicts in one place
 * (error-verdict.ts). Never gives up on a valid command while a part effectd needs is unreachable:
 * it retries with capped backoff until the partition is taken away, and the command is then
 * redelivered elsewhere.
 */
export class EffectCommandProcessor {
  private readonly poisonAfterTries: number;
  private readonly maxCommandBytes: number;
  private readonly log: (line: string) => void;

  constructor(private readonly runtime: { gateway: Gateway; health: LedgerHealth }, private readonly topics: KafkaTopics, options: ProcessorOptions = {}) {
    this.poisonAfterTries = options.poisonAfterTries ?? 8;
    this.maxCommandBytes = options.maxCommandBytes ?? 1024 * 1024;
    this.log = options.log ?? ((line) => console.error(line));
  }

  async process(record: CommandRecord, lease: CommandLease): Promise<CommandVerdict> {
    try {
      return await this.verdict(record, lease);
    } catch (error) {
      this.log(`effectd kafka: ${record.where} hit a defect: ${error instanceof Error ? error.stack : String(error)}`);
      return { kind: 'failed', error: asEffectdError(error) };
    }
  }

  private async verdict(record: CommandRecord, lease: CommandLease): Promise<CommandVerdict> {
    // One body limit for every door (EFFECTD_BODY_LIMIT_BYTES): a command HTTP would refuse is not read here either.
    if (record.value && record.value.length > this.maxCommandBytes) {
      return { kind: 'dead-letter', reason: 'too_large', detail: `the command message is ${record.value.length} bytes, over the ${this.maxCommandBytes} bytes of EFFECTD_BODY_LIMIT_BYTES (the same limit as an HTTP body); nothing was recorded` };
    }
    const decoded = decodeCommand(record.value);
    const { envelope } = decoded;
    // Until the sender is known to be allowed its reply topic, refusals go to the outcomes topic only.
    const toOutcomes = refusalTo(envelope, record.key, undefined);
    let caller: Caller;
    try {
      caller = authenticateCommand(this.runtime.gateway, record.headers);
    } catch (error) {
      return this.settle(asEffectdError(error), toOutcomes);
    }
    const verdict = await this.callerVerdict(caller, decoded, record, lease, toOutcomes);
    // Its credential is known from here on: a dead letter says who sent it.
    return verdict.kind === 'dead-letter' ? { ...verdict, sender: { tenant: caller.tenant, name: caller.name } } : verdict;
  }

  /** The rest, for an authenticated sender: its reply topic checked, the command submitted through the gateway (retried while effectd cannot settle it). */
  private async callerVerdict(caller: Caller, decoded: DecodedCommand, record: CommandRecord, lease: CommandLease, toOutcomes: Refuse): Promise<CommandVerdict> {
    const { envelope } = decoded;
    const forbiddenReply = replyTopicRefusal(envelope.replyTopic, caller, this.topics);
    if (forbiddenReply) return this.settle(forbiddenReply, toOutcomes, 'forbidden_reply_topic');
    const refuse = refusalTo(envelope, record.key, envelope.replyTopic);
    if (!decoded.ok) return this.settle(new EffectdError('invalid_command', decoded.detail), refuse, 'undecodable');

    for (let tries = 0; ; tries++) {
      if (!lease.isActive()) return { kind: 'abandoned' };
      let failure: EffectdError;
      try {
        // The producer's trace context travels in the record's headers (traceparent, tracestate).
        const { outcome, address } = await withTraceFrom(record.headers, () => this.runtime.gateway.submit(caller, decoded.command, decoded.waitMs !== undefined ? { waitMs: decoded.waitMs } : {}));
        return { kind: 'answer', reply: { ...replyTo(envelope.replyTopic, envelope.correlationId), key: address.workflowId, value: encodeOutcome(outcome, { ...envelope, ...address }) } };
      } catch (thrown) {
        failure = asEffectdError(thrown);
        if (failure.code === 'internal' && thrown instanceof Error && thrown !== failure) this.log(`effectd kafka: ${record.where} hit a defect: ${thrown.stack}`);
      }
      const verdict = verdictFor(failure, refuse);
      if (verdict.kind !== 'retry') return verdict;
      if (tries + 1 >= this.poisonAfterTries && (await this.ledgerHealthy())) {
        return { kind: 'dead-letter', reason: 'handler_error', detail: `failed ${tries + 1} times while the ledger is reachable (${failure.code}: ${failure.message})` };
      }
      const ms = backoffMs(tries, verdict.afterMs ?? 50, 5_000);
      this.log(`effectd kafka: ${record.where} try ${tries + 1} failed (${failure.code}: ${failure.message}); retrying in ${ms} ms`);
      await pauseWhile(ms, () => lease.isActive());
      await lease.heartbeat().catch(() => {});
    }
  }

  /** A command refused before it reached the gateway, by the same mapping; a retry is the transport's (logged, backed off, redelivered). */
  private settle(error: EffectdError, refuse: Refuse, reason?: DeadLetterReason): CommandVerdict {
    const verdict = verdictFor(error, refuse, reason);
    return verdict.kind === 'retry' ? { kind: 'failed', error } : verdict;
  }

  private ledgerHealthy(): Promise<boolean> {
    return this.runtime.health.ledgerReachable();
  }
}

function replyTo(topic: string | undefined, correlationId: string | undefined): Pick<Reply, 'topic' | 'correlationId'> {
  return { ...(topic ? { topic } : {}), ...(correlationId ? { correlationId } : {}) };
}

/** Refusals of one command, to `topic` (the outcomes topic when undefined). */
function refusalTo(envelope: CommandEnvelope, messageKey: string | undefined, topic: string | undefined): Refuse {
  return (error) => {
    const fields = Array.isArray(error.details.fields) ? (error.details.fields as { path: string; message: string }[]) : [];
    const effectId = typeof error.details.effectId === 'string' ? error.details.effectId : undefined;
    const recorded = recordedEffectOf(error.details.recorded);
    return {
      ...replyTo(topic, envelope.correlationId),
      key: envelope.workflowId ?? messageKey ?? envelope.correlationId ?? '',
      value: encodeRefusal({ code: error.code, message: error.message, fields, ...(effectId ? { effectId } : {}), ...(recorded ? { recorded } : {}) }, envelope),
    };
  };
}
