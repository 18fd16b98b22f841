import { randomUUID } from 'node:crypto';
import { create, toJsonString, type JsonObject } from '@bufbuild/protobuf';
import { Kafka, logLevel, Partitioners, type Consumer, type IHeaders, type Producer } from 'kafkajs';
import { CoalescingPublisher } from '../shared/coalescing-publisher.js';
import '../shared/kafkajs-idle-fix.js';
import { decodeOutcome } from '../transport/wire/outcome-decoder.js';
import { AgentStatus, EffectCommandSchema, type EffectOutcome } from '../transport/wire/effectd/v1/effectd_pb.js';
import { EffectdError } from '../core/errors.js';
import type { CommandRefusal, RecordedEffect } from './refusals.js';

/** One effect, as the harness around an agent declares it. workflowId and step come from the harness, never from the model. */
export interface EffectRequest {
  workflowId: string;
  /** The step's name or index in the workflow plan, fixed when the step was planned. */
  step: string | number;
  tool: string;
  args: JsonObject;
  slot?: string;
  /** Leave it out: the tenant is the credential's. Naming another one gets the command refused (forbidden). */
  tenant?: string;
  /** Whom the agent acts for (an end user, a ticket): recorded as a labelled on-behalf-of claim, never as the actor. */
  principal?: string;
  /** Declares an intentional repeat of an effect with the same content. */
  repeat?: { reason: string };
  approval?: { approvalId?: string; approvedBy?: string; policyGeneration?: number };
  saga?: { sagaId: string; saga?: string; sagaStep?: string };
  trace?: { traceparent?: string; tracestate?: string };
}

/** What an answer says: one of the effect's three states, or `refused` (the command itself was not accepted). */
export type AnswerStatus = 'done' | 'not_done' | 'unknown' | 'refused';

interface AnswerFields {
  correlationId: string;
  message: string;
  effectId?: string;
  state?: string;
  receipt?: string;
  reason?: string;
  reference?: string;
  checking?: string;
  expectAnswerBy?: string;
  replayed: boolean;
  /** True when no answer arrived in time (or the command could not be handed to Kafka): the status is then unknown. */
  noAnswer?: boolean;
  /** With noAnswer: whether Kafka acknowledged the command (then effectd will execute it; only the answer is missing). */
  accepted?: boolean;
}

/** The three-state answer about the effect. `unknown` is never a failure: re-submit the SAME request to learn the outcome. */
export interface OutcomeAnswer extends AnswerFields {
  status: 'done' | 'not_done' | 'unknown';
  error?: undefined;
}

/**
 * The command was refused (AGENT_STATUS_REFUSED): not an outcome of the effect, and never a reason
 * to start a new step by itself. For intent_conflict, `error.recorded` says where the step's
 * recorded effect stands: done (do not do it again), unknown (being checked: do not start another),
 * or not_done (a changed intent may go as a new step).
 */
export interface RefusedAnswer extends AnswerFields {
  status: 'refused';
  error: CommandRefusal;
}

/** effectd's answer to one command: the effect's outcome, or the command's refusal. */
export type EffectAnswer = OutcomeAnswer | RefusedAnswer;

export interface EffectClientOptions {
  brokers: string[];
  /**
   * The token of the effectd credential this client acts as (the same credentials as HTTP's bearer);
   * required: where it comes from is the caller's choice (the SDK reads no environment). Every
   * command carries it in the Kafka header `authorization: Bearer <token>`:
   * effectd runs a command only for its credential's tenant, and dead-letters one without it.
   */
  token?: string;
  clientId?: string;
  commandsTopic?: string;
  /**
   * Where this client reads answers; when not effectd's default, commands carry it as their reply
   * topic, which effectd accepts only if it is effectd's outcomes topic or starts with the
   * credential's `replyTopicPrefix` (a topic of your own keeps your answers from other readers).
   */
  outcomesTopic?: string;
  /** How long submit() waits for an answer before it returns `unknown` (default 30 s). */
  timeoutMs?: number;
  /** kafkajs log level (default NOTHING: every failure already reaches the caller as an `unknown` answer). */
  kafkaLogLevel?: logLevel;
}

const STATUS: Record<AgentStatus, AnswerStatus> = { [AgentStatus.UNSPECIFIED]: 'unknown', [AgentStatus.DONE]: 'done', [AgentStatus.NOT_DONE]: 'not_done', [AgentStatus.UNKNOWN]: 'unknown', [AgentStatus.REFUSED]: 'refused' };
const RECORDED: Partial<Record<AgentStatus, RecordedEffect['status']>> = { [AgentStatus.DONE]: 'done', [AgentStatus.NOT_DONE]: 'not_done', [AgentStatus.UNKNOWN]: 'unknown' };
const DEFAULT_OUTCOMES = 'effectd.outcomes';
const CORRELATION_HEADER = 'effectd-correlation-id';
/** The longest an empty fetch of answers waits at the broker (an answer ends it at once). */
const IDLE_POLL_MS = 500;

interface Waiter {
  resolve(answer: EffectAnswer): void;
  timer: NodeJS.Timeout;
}

/**
 * The agent SDK: publishes effect commands (keyed by workflowId, with the credential's token in the
 * `authorization` header) and awaits their outcomes by correlation id. It never mints keys: effectd
 * derives the effect's identity and the provider key from (tenant, workflowId, step, slot), the
 * tenant being the credential's. Every submit() ends in an answer, `unknown` on timeout.
 */
export class EffectClient {
  private readonly waiters = new Map<string, Waiter>();
  private readonly accepted = new Set<string>();
  private closed = false;
  /** Commands submitted while a produce request is in flight go together in the next one: many concurrent calls, few requests. */
  private readonly publisher: CoalescingPublisher;

  private constructor(
    private readonly producer: Producer,
    private readonly consumer: Consumer,
    private readonly commandsTopic: string,
    private readonly replyTopic: string | undefined,
    private readonly timeoutMs: number,
    private readonly authorization: string,
  ) {
    this.publisher = new CoalescingPublisher(producer);
  }

  /** Connects; throws when there is no token, as effectd would refuse every command. */
  static async connect(options: EffectClientOptions): Promise<EffectClient> {
    const token = options.token?.trim();
    if (!token) throw new EffectdError('invalid_config', 'EffectClient needs the token of an effectd credential: pass connect({ token }), e.g. from the EFFECTD_TOKEN environment variable (a new effectd writes its first credentials to <data-dir>/credentials.json)');
    const kafka = new Kafka({ clientId: options.clientId ?? `effectd-client-${randomUUID().slice(0, 8)}`, brokers: options.brokers, logLevel: options.kafkaLogLevel ?? logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 5_000 } });
    const outcomesTopic = options.outcomesTopic ?? DEFAULT_OUTCOMES;
    // Murmur2, as Java clients: a workflow's commands land on one partition whichever language published them.
    const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    // Read answers from where the topic ends NOW: seeking there after joining guarantees that no
    // answer to a command published after connect() is missed, however long the join took.
    const admin = kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(outcomesTopic).finally(() => admin.disconnect());
    // A fetch returns as soon as one answer is there (minBytes 1): the wait bounds only an empty
    // poll (an idle client asks twice a second, not ten times) and how long close() waits for it.
    const consumer = kafka.consumer({ groupId: `effectd-client-${randomUUID()}`, maxWaitTimeInMs: IDLE_POLL_MS, allowAutoTopicCreation: false });
    await consumer.connect();
    await consumer.subscribe({ topics: [outcomesTopic], fromBeginning: false });
    const client = new EffectClient(producer, consumer, options.commandsTopic ?? 'effectd.commands', outcomesTopic === DEFAULT_OUTCOMES ? undefined : outcomesTopic, options.timeoutMs ?? 30_000, `Bearer ${token}`);
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    // No offset commits: the group is this client's alone and it starts at the topic's end (the seek
    // below), so a committed offset is never read; kafkajs would commit after every fetched batch
    // (0.65 commits per effect at 16 concurrent submits, more requests than the commands' own).
    // A fetched batch of answers is read in one call: eachMessage awaits, resolves and checks the
    // heartbeat per message, work the answers do not need (nothing is committed).
    await consumer.run({ autoCommit: false, eachBatch: async ({ batch }) => { for (const message of batch.messages) client.onOutcome(message.value, message.headers); } });
    await joined;
    for (const end of ends) consumer.seek({ topic: outcomesTopic, partition: end.partition, offset: end.offset });
    return client;
  }

  /** Publishes one command and waits for its answer (or `unknown` after the timeout). */
  async submit(request: EffectRequest, options: { timeoutMs?: number; correlationId?: string } = {}): Promise<EffectAnswer> {
    const correlationId = options.correlationId ?? randomUUID();
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    if (this.closed) return noAnswer(correlationId, request, 'the client is closed');
    const answered = this.await(correlationId, request, timeoutMs);
    try {
      await this.publisher.publish({ topic: this.commandsTopic, key: request.workflowId, value: encodeCommand(request, correlationId, this.replyTopic), headers: this.headers(correlationId) });
      if (this.waiters.has(correlationId)) this.accepted.add(correlationId);
    } catch (error) {
      this.settle(correlationId, { ...noAnswer(correlationId, request, `the command could not be handed to Kafka (${(error as Error).message}); it may or may not have been published`), accepted: false });
    }
    return answered;
  }

  /**
   * Publishes many commands in one produce request (fan-out: "email 5 recipients"); each promise
   * settles with its own command's answer, `unknown` on timeout.
   */
  submitMany(requests: readonly EffectRequest[], options: { timeoutMs?: number } = {}): Promise<EffectAnswer>[] {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const ids = requests.map(() => randomUUID());
    if (this.closed) return requests.map((r, i) => Promise.resolve(noAnswer(ids[i]!, r, 'the client is closed')));
    const answers = requests.map((request, i) => this.await(ids[i]!, request, timeoutMs));
    const messages = requests.map((request, i) => ({ key: request.workflowId, value: encodeCommand(request, ids[i]!, this.replyTopic), headers: this.headers(ids[i]!) }));
    this.producer.send({ topic: this.commandsTopic, acks: -1, messages }).then(
      () => ids.forEach((id) => this.waiters.has(id) && this.accepted.add(id)),
      (error: unknown) => ids.forEach((id, i) => this.settle(id, { ...noAnswer(id, requests[i]!, `the command could not be handed to Kafka (${(error as Error).message}); it may or may not have been published`), accepted: false })),
    );
    return answers;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [correlationId] of this.waiters) this.settle(correlationId, { status: 'unknown', correlationId, replayed: false, noAnswer: true, message: 'unknown: the client closed before effectd answered; submit the same command again to learn its outcome.' });
    await this.consumer.disconnect().catch(() => {});
    await this.producer.disconnect().catch(() => {});
  }

  private headers(correlationId: string): Record<string, string> {
    return { authorization: this.authorization, [CORRELATION_HEADER]: correlationId };
  }

  private await(correlationId: string, request: EffectRequest, timeoutMs: number): Promise<EffectAnswer> {
    return new Promise<EffectAnswer>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(correlationId);
        resolve({ ...noAnswer(correlationId, request, `no answer from effectd within ${timeoutMs / 1000} s`), accepted: this.accepted.has(correlationId) });
        this.accepted.delete(correlationId);
      }, timeoutMs);
      this.waiters.set(correlationId, { resolve, timer });
    });
  }

  private onOutcome(value: Buffer | null, headers?: IHeaders): void {
    if (!value || this.waiters.size === 0) return;
    // effectd names the answer's correlation id in a header too: another client's answer (on a shared
    // outcomes topic) is passed over without reading its JSON.
    const header = headers?.[CORRELATION_HEADER];
    const named = Array.isArray(header) ? header[0] : header;
    if (named !== undefined && !this.waiters.has(named.toString())) return;
    let outcome: EffectOutcome;
    try {
      outcome = decodeOutcome(value.toString('utf8'));
    } catch {
      return; // not an outcome this client can read: not ours
    }
    if (this.waiters.has(outcome.correlationId)) this.settle(outcome.correlationId, toAnswer(outcome));
  }

  private settle(correlationId: string, answer: EffectAnswer): void {
    const waiter = this.waiters.get(correlationId);
    if (!waiter) return;
    this.waiters.delete(correlationId);
    this.accepted.delete(correlationId);
    clearTimeout(waiter.timer);
    waiter.resolve(answer);
  }
}

export function encodeCommand(request: EffectRequest, correlationId: string, replyTopic?: string): string {
  return toJsonString(EffectCommandSchema, create(EffectCommandSchema, {
    tenant: request.tenant ?? '',
    workflowId: request.workflowId,
    position: typeof request.step === 'number' ? { case: 'stepIndex', value: request.step } : { case: 'step', value: request.step },
    slot: request.slot ?? '',
    tool: request.tool,
    args: request.args,
    principal: request.principal ?? '',
    correlationId,
    replyTopic: replyTopic ?? '',
    ...(request.repeat ? { repeat: request.repeat } : {}),
    ...(request.approval ? { approval: request.approval } : {}),
    ...(request.saga ? { saga: request.saga } : {}),
    ...(request.trace ? { trace: request.trace } : {}),
  }));
}

/** An EffectOutcome as the harness reads it: a refused command (AGENT_STATUS_REFUSED, or any outcome with `error`) is `refused`. */
export function toAnswer(outcome: EffectOutcome): EffectAnswer {
  const optional = (key: keyof AnswerFields, value: string) => (value ? { [key]: value } : {});
  const fields: AnswerFields = {
    correlationId: outcome.correlationId,
    message: outcome.message,
    replayed: outcome.replayed,
    ...optional('effectId', outcome.effectId),
    ...optional('state', outcome.state),
    ...optional('receipt', outcome.receipt),
    ...optional('reason', outcome.reason),
    ...optional('reference', outcome.reference),
    ...optional('checking', outcome.checking),
    ...(outcome.expectAnswerBy ? { expectAnswerBy: new Date(Number(outcome.expectAnswerBy.seconds) * 1000 + Math.floor(outcome.expectAnswerBy.nanos / 1e6)).toISOString() } : {}),
  };
  // A command error is a refusal whatever the status says: an effectd older than AGENT_STATUS_REFUSED answered them NOT_DONE.
  if (outcome.error || outcome.status === AgentStatus.REFUSED) return { ...fields, status: 'refused', error: refusalOf(outcome) };
  const status = STATUS[outcome.status] ?? 'unknown';
  return { ...fields, status: status === 'refused' ? 'unknown' : status };
}

function refusalOf(outcome: EffectOutcome): CommandRefusal {
  const error = outcome.error ?? { code: outcome.reason || 'refused', message: outcome.message, fields: [], recorded: undefined };
  const recorded = error.recorded && RECORDED[error.recorded.status];
  return {
    code: error.code, message: error.message, fields: error.fields.map((f) => ({ path: f.path, message: f.message })),
    ...(error.recorded && recorded ? { recorded: { status: recorded, state: error.recorded.state, ...(error.recorded.receipt ? { receipt: error.recorded.receipt } : {}), message: error.recorded.message } } : {}),
  };
}

function noAnswer(correlationId: string, request: EffectRequest, why: string): OutcomeAnswer {
  return {
    status: 'unknown', correlationId, replayed: false, noAnswer: true, reason: why,
    message: `unknown: ${why}, so ${request.tool} (workflow ${request.workflowId}, step ${request.step}) may or may not have happened. Submit the SAME command again (same workflowId and step) to learn its outcome; do not start another ${request.tool} as a new step.`,
  };
}
