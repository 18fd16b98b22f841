import { Server, type CustomTransportStrategy } from '@nestjs/microservices';
import { Kafka, logLevel, Partitioners, type Consumer, type EachBatchPayload, type KafkaMessage, type LogEntry, type Producer } from 'kafkajs';
import { lastValueFrom } from 'rxjs';
import { EffectdError } from '../../core/errors.js';
import { backoffMs, pauseWhile, sleep } from './backoff.js';
import type { CommandLease, CommandVerdict, Reply } from './command-verdict.js';
import { CoalescingPublisher } from '../../shared/coalescing-publisher.js';
import '../../shared/kafkajs-idle-fix.js';
import { deadLetter, deadLetterLine, type DeadLetterNotice } from './dead-letter.js';
import { EFFECT_COMMAND, EffectCommandContext } from './effect-command.context.js';
import { PartitionPipeline, Semaphore } from './partition-pipeline.js';
import type { KafkaIngressSettings } from './kafka-settings.js';
import { LedgerGate } from './ledger-gate.js';

const COMMIT_EVERY_MS = 200;
const KAFKAJS_RETRY = { retries: 10, initialRetryTime: 200, maxRetryTime: 5_000 };
/**
 * The longest an empty fetch waits at the broker. A fetch returns as soon as one command is there
 * (minBytes 1), so this bounds only an idle poll (twice a second; 250 ms made it four) and how late
 * kafkajs's loop heartbeats or sees a seek; kept under the heartbeat interval.
 */
const IDLE_POLL_MS = 500;
/**
 * The most an answer waits for the answers of the other commands this instance is deciding, so
 * they go in one produce request (it goes at once when it is the last one, so a lone command never
 * waits). On the bench's Kafka lane (packages/bench/src/kafka-requests.ts), against one turn of the
 * event loop only, 3 reps on a quiet machine: 7.0–10.2 answers per produce request instead of
 * 3.4–3.7 at c=16, the requests of both sides 0.39–0.54 per effect instead of 0.89–0.96 (the SDK's
 * fetches and submits follow the answers' requests), p50 16.9–26.2 ms against 23.8–31.4; c=64
 * 0.17–0.21 requests instead of 0.29–0.30, p50 38.8–50.1 against 39.5–55.6 ms; c=1 unchanged.
 */
const ANSWER_LINGER_MS = 3;
/** A failing command holds its workflow's lane this long at most before it is tried again. */
const FAILED_PAUSE_CAP_MS = 30_000;
/** Failing commands whose count of failures is kept (for the growing pause); the oldest are forgotten. */
const FAILURES_KEPT = 1_000;
/** How often the door asks whether the ledger takes writes (the answer is the write watch's, probed at most once a second). */
const LEDGER_LOOK_EVERY_MS = 1_000;

export interface IngressMetrics {
  commandReceived(ingress: string): void;
  deadLettered(reason: string): void;
}

/**
 * The Kafka ingress as a NestJS custom transport over kafkajs. ServerKafka only offers
 * `eachMessage` (one command at a time per partition); effectd needs many workflows of one
 * partition in flight at once for throughput, so this strategy consumes with `eachBatch`:
 *  - a batch is admitted into its partition's pipeline (partition-pipeline.ts) and eachBatch returns,
 *    so the consumer fetches on while its commands run (kafkajs fetches again only when every batch
 *    of the last fetch returned: waiting for each batch's slowest command stalled the whole
 *    instance), up to `maxInFlight` commands, then the batch waits for room;
 *  - workflows (message keys) run concurrently, one workflow's commands strictly in order, across batches;
 *  - each outcome is published once the shell has recorded it (the shell records before it answers);
 *  - a partition's offset is committed (next offset; kafkajs autoCommit off) only for the contiguous
 *    prefix of commands whose outcome or dead letter the broker acknowledged, so everything committed
 *    is durably in the ledger; a command that fails is retried in place (its workflow waits); one that
 *    cannot complete while the partition is still ours has it read again from the first command not
 *    completed, and everything after is redelivered and replayed. Commits of all partitions go
 *    together every COMMIT_EVERY_MS: a commit is a write to __consumer_offsets, and one per batch
 *    per partition cost the broker more CPU than the commands themselves.
 */
export class KafkaCommandServer extends Server implements CustomTransportStrategy {
  private readonly kafka: Kafka;
  private consumer?: Consumer;
  private producer?: Producer;
  private publisher?: CoalescingPublisher;
  private readonly inFlight: Semaphore;
  private closing = false;
  /** Next offsets ready to commit, by "topic:partition". */
  private readonly readyToCommit = new Map<string, { topic: string; partition: number; offset: string }>();
  private commitTimer?: NodeJS.Timeout;
  private activeBatches = 0;
  private batchesDone?: () => void;
  /** By "topic:partition"; kept across rebalances (their lanes order a redelivered command behind its running copy). */
  private readonly pipelines = new Map<string, { topic: string; partition: number; pipeline: PartitionPipeline }>();
  private handler?: ReturnType<Server['getHandlerByPattern']>;
  /** Handler failures so far, by "topic[partition]@offset" of the failing command. */
  private readonly failures = new Map<string, number>();
  /** Commands in the handler now, whose answers are still to come (the publisher lingers for them). */
  private deciding = 0;
  /** Out of the group because the ledger takes no writes (ledger-gate.ts): every lease is inactive. */
  private away = false;
  private gate?: LedgerGate;
  /** The last join asked for: joins run one at a time (a crash's and the ledger gate's must not make two consumers). */
  private joins: Promise<void> = Promise.resolve();

  constructor(
    private readonly settings: KafkaIngressSettings,
    private readonly metrics: IngressMetrics,
    private readonly log: (line: string) => void,
    private readonly deadLettered: (notice: DeadLetterNotice) => void = (n) => log(`effectd kafka: ${deadLetterLine(n)}`),
    /** Whether the ledger takes writes now; without it the door never stands down. */
    private readonly ledgerWritable?: () => Promise<boolean>,
  ) {
    super();
    this.inFlight = new Semaphore(settings.maxInFlight);
    this.kafka = new Kafka({
      clientId: settings.clientId,
      brokers: settings.brokers,
      logLevel: logLevel.WARN,
      logCreator: () => (entry: LogEntry) => this.log(`kafkajs ${logLevel[entry.level]} [${entry.namespace}] ${entry.log.message}${entry.log.error ? ` (${String(entry.log.error)})` : ''}`),
      retry: KAFKAJS_RETRY,
    });
  }

  /** Whether `consumer` is the one the door consumes with now (not one it left, replaced or closed). */
  private isCurrent(consumer: Consumer): boolean {
    return this.consumer === consumer && !this.closing && !this.away;
  }

  on(): void {
    /* no transport events are exposed */
  }

  unwrap<T>(): T {
    return { consumer: this.consumer, producer: this.producer } as T;
  }

  listen(callback: (...optionalParams: unknown[]) => unknown): void {
    this.start().then(() => callback(), (error: unknown) => callback(error));
  }

  async close(): Promise<void> {
    // Start nothing new; let running commands settle (abandoned ones are redelivered), commit, leave.
    this.closing = true;
    this.gate?.stop();
    clearInterval(this.commitTimer);
    const settled = (async () => {
      if (this.activeBatches > 0) await new Promise<void>((resolve) => (this.batchesDone = resolve));
      await Promise.all([...this.pipelines.values()].map((p) => p.pipeline.idle()));
    })();
    await Promise.race([settled, sleep(30_000)]);
    await this.commitReady();
    await this.consumer?.disconnect().catch(() => {});
    await this.producer?.disconnect().catch(() => {});
  }

  private async start(): Promise<void> {
    // Looked up once: Nest normalizes the pattern on every lookup.
    this.handler = this.getHandlerByPattern(EFFECT_COMMAND);
    if (!this.handler) throw new EffectdError('internal', `no handler for ${EFFECT_COMMAND}`);
    this.producer = this.kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await this.producer.connect();
    this.publisher = new CoalescingPublisher(this.producer, { lingerMs: ANSWER_LINGER_MS, more: () => this.deciding > 0 });
    await this.join();
    this.commitTimer = setInterval(() => void this.commitReady(), COMMIT_EVERY_MS);
    if (this.ledgerWritable) {
      const topic = this.settings.topics.commands;
      this.gate = new LedgerGate(this.ledgerWritable, {
        pause: () => this.consumer?.pause([{ topic }]),
        resume: () => this.consumer?.resume([{ topic }]),
        leave: () => this.leave(),
        rejoin: () => this.rejoin(),
      }, { awayAfterMs: this.settings.ledgerOutageMs, log: this.log });
      this.gate.start(LEDGER_LOOK_EVERY_MS);
    }
  }

  /** Joins the group with a new consumer, after any join under way, unless the door has one by then or is leaving. */
  private join(): Promise<void> {
    const joined = this.joins.then(() => this.joinOnce());
    this.joins = joined.catch(() => {});
    return joined;
  }

  /** Back in the group once the ledger takes writes again (after leave()). */
  private async rejoin(): Promise<void> {
    this.away = false;
    await this.join();
  }

  /** Joins the group with a new consumer and consumes (at start, when the ledger takes writes again, after a crash kafkajs does not restart). */
  private async joinOnce(): Promise<void> {
    if (this.consumer || this.closing || this.away) return;
    const { topics } = this.settings;
    const consumer = this.kafka.consumer({
      groupId: this.settings.groupId,
      sessionTimeout: this.settings.sessionTimeoutMs,
      heartbeatInterval: this.settings.heartbeatIntervalMs,
      rebalanceTimeout: Math.max(60_000, this.settings.sessionTimeoutMs),
      maxWaitTimeInMs: Math.min(IDLE_POLL_MS, this.settings.heartbeatIntervalMs),
      allowAutoTopicCreation: false,
      // kafkajs restarts a crashed consumer on a timer, and a crash can come after disconnect() (a join
      // still in flight fails once its cluster is gone): restarted, a consumer the door let go of
      // joined the group again and held partitions no one fetched (paused, as it was when it left).
      // Only the door's current consumer comes back.
      retry: { ...KAFKAJS_RETRY, restartOnFailure: async () => this.isCurrent(consumer) },
    });
    // Offsets of partitions this member no longer owns are not ours to commit.
    // After a join the consumer reads every partition again from its committed offset: what was in flight is forgotten (and redelivered).
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      for (const [key, ready] of this.readyToCommit) {
        if (!payload.memberAssignment[ready.topic]?.includes(ready.partition)) this.readyToCommit.delete(key);
      }
      for (const { pipeline } of this.pipelines.values()) pipeline.nextEpoch();
    });
    consumer.on(consumer.events.CRASH, (event) => {
      this.log(`effectd kafka: consumer crashed (${String(event.payload.error)}); restart: ${event.payload.restart}`);
      if (!event.payload.restart && this.isCurrent(consumer)) void this.replaceCrashed();
    });
    try {
      await consumer.connect();
      // A new group starts at the beginning: commands published before effectd first joined are accepted commands too.
      await consumer.subscribe({ topics: [topics.commands], fromBeginning: true });
      if (this.closing || this.away) {
        // The door closed or left the group while this consumer was joining.
        await consumer.disconnect().catch(() => {});
        return;
      }
      this.consumer = consumer;
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.settings.partitionsConsumedConcurrently,
        eachBatch: (payload) => this.consumeBatch(payload, consumer),
      });
      // Joined while the ledger takes no writes (a crash's rejoin): fetching waits for it, as the gate would have it.
      if (this.gate?.state === 'paused') consumer.pause([{ topic: topics.commands }]);
    } catch (error) {
      if (this.consumer === consumer) this.consumer = undefined;
      await consumer.disconnect().catch(() => {});
      throw error;
    }
  }

  /**
   * Leaves the group while the ledger takes no writes, so the other instances take this one's
   * partitions: every lease turns inactive (running commands stop where they are, unanswered and
   * uncommitted), what is settled is committed, completions still to come are forgotten (they are
   * redelivered to the partitions' next owners, and the ledger answers them), and the consumer leaves.
   */
  private async leave(): Promise<void> {
    this.away = true;
    await this.commitReady();
    for (const { pipeline } of this.pipelines.values()) pipeline.nextEpoch();
    this.readyToCommit.clear();
    const consumer = this.consumer;
    this.consumer = undefined;
    await consumer?.disconnect();
  }

  /**
   * kafkajs gave up on the current consumer (a crash it does not restart: a non-retriable error, already
   * disconnected): without a consumer the door would fetch nothing until effectd restarts, so it joins
   * again with a new one, backing off, until it has one or is closing or away (the gate joins then).
   * Its leases end; what it completed and did not commit is redelivered and answered by the ledger.
   */
  private async replaceCrashed(): Promise<void> {
    this.consumer = undefined;
    for (const { pipeline } of this.pipelines.values()) pipeline.nextEpoch();
    this.readyToCommit.clear();
    for (let attempt = 0; !this.consumer && !this.closing && !this.away; attempt++) {
      await sleep(backoffMs(attempt, 200, 5_000));
      try {
        await this.join();
        if (this.consumer) this.log('effectd kafka: joined the consumer group again with a new consumer after the crash');
      } catch (error) {
        this.log(`effectd kafka: could not join the consumer group again after the crash (${(error as Error).message}); trying again`);
      }
    }
  }

  private async commitReady(): Promise<void> {
    if (this.readyToCommit.size === 0 || !this.consumer) return;
    const offsets = [...this.readyToCommit.values()];
    this.readyToCommit.clear();
    try {
      await this.consumer.commitOffsets(offsets);
    } catch (error) {
      // A rebalance got there first: the partitions' new owners re-read these commands and the ledger replays them.
      this.log(`effectd kafka: commit failed (${(error as Error).message}); the commands after the last commit will be replayed`);
    }
  }

  private async consumeBatch(payload: EachBatchPayload, consumer: Consumer): Promise<void> {
    this.activeBatches++;
    try {
      await this.consumeBatchMessages(payload, consumer);
    } finally {
      if (--this.activeBatches === 0) this.batchesDone?.();
    }
  }

  private pipelineOf(topic: string, partition: number): PartitionPipeline {
    const id = `${topic}:${partition}`;
    let entry = this.pipelines.get(id);
    if (!entry) {
      const pipeline = new PartitionPipeline({
        committable: (offset) => this.readyToCommit.set(id, { topic, partition, offset }),
        threw: (offset, error) => this.log(`effectd kafka: ${topic}[${partition}]@${offset}: ${String(error)}`),
      });
      entry = { topic, partition, pipeline };
      this.pipelines.set(id, entry);
    }
    return entry.pipeline;
  }

  /** Admits the batch's commands (waiting while `maxInFlight` are running) and returns: they finish in the partition's pipeline. */
  private async consumeBatchMessages({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload, consumer: Consumer): Promise<void> {
    const { topic, partition } = batch;
    const pipeline = this.pipelineOf(topic, partition);
    const epoch = pipeline.epoch;
    const beat = async () => {
      try {
        await heartbeat();
      } catch (error) {
        // REBALANCE_IN_PROGRESS and friends: finish what runs, start nothing new, commit what is done,
        // and read every partition again from its first command not completed (should it stay ours
        // without a rejoin, nothing admitted later may be committed past a command abandoned now).
        for (const p of this.pipelines.values()) this.readAgain(p.pipeline, p.topic, p.partition);
        throw error;
      }
    };
    if (this.consumer !== consumer && !this.closing && !this.away) {
      // A consumer the door no longer uses got a batch (it came back in a way restartOnFailure did not
      // catch): it leaves, so its partitions go to members that fetch them. Not from inside eachBatch,
      // which disconnect() waits for.
      setImmediate(() => void consumer.disconnect().catch(() => {}));
      this.log(`effectd kafka: a consumer this door no longer uses got ${batch.topic}[${batch.partition}]; it leaves the group`);
      return;
    }
    const lease: CommandLease = { isActive: () => this.isCurrent(consumer) && pipeline.epoch === epoch && isRunning() && !isStale(), heartbeat: beat };
    const ticker = setInterval(() => void beat().catch(() => {}), this.settings.heartbeatIntervalMs);
    try {
      for (const message of batch.messages) {
        await this.inFlight.acquire();
        if (!lease.isActive()) {
          this.inFlight.release();
          return; // not resolved: read again by this member or the partition's next owner
        }
        void pipeline.admit(message.offset, message.key?.toString('latin1') ?? '', async () => {
          try {
            if (!lease.isActive()) return false;
            let completed = false;
            try {
              completed = await this.handle(topic, partition, message, lease);
            } catch (error) {
              this.log(`effectd kafka: ${topic}[${partition}]@${message.offset} failed outside its handler (${String(error)}); it is redelivered`);
            }
            if (!completed && lease.isActive()) this.readAgain(pipeline, topic, partition);
            return completed;
          } finally {
            this.inFlight.release();
          }
        });
        resolveOffset(message.offset);
      }
      // Returns once its commands are admitted, not done: kafkajs fetches again only when every batch
      // of the last fetch returned, so waiting here for the batch's commands made the next command
      // wait for the slowest of them (lock-step rounds of ~10 commands at c=16). Returning at once
      // (it waited up to 250 ms before), on the bench's Kafka lane, 3 reps on a quiet machine: c=16
      // 959–1,155 effects/s, p50 13.2–15.7 ms, against 851–942/s, 15.8–17.7 ms; c=64 1,535–1,850/s
      // against 1,451–1,567/s; requests per effect, both sides, 0.34–0.46 against 0.44–0.47 at c=16
      // (more commands in flight, so more answers per request) and 0.17–0.22 against 0.16–0.17 at c=64.
    } finally {
      clearInterval(ticker);
    }
  }

  /** A command did not complete while the partition is still ours: read the partition again from its first command not completed. */
  private readAgain(pipeline: PartitionPipeline, topic: string, partition: number): void {
    const offset = pipeline.nextEpoch();
    if (offset === undefined) return;
    try {
      // Everything before `offset` is done, so reading from it loses nothing, whoever owns the partition when it applies.
      this.consumer?.seek({ topic, partition, offset });
    } catch (error) {
      this.log(`effectd kafka: could not read ${topic}[${partition}] again from ${offset} (${(error as Error).message}); a restart replays it`);
    }
  }

  /** True once the command's answer (or dead letter) is acknowledged by the broker. */
  private async handle(topic: string, partition: number, message: KafkaMessage, lease: CommandLease): Promise<boolean> {
    this.metrics.commandReceived('kafka');
    const handler = this.handler!;
    const where = `${topic}[${partition}]@${message.offset}`;
    let verdict: CommandVerdict;
    this.deciding++;
    try {
      for (;;) {
        try {
          verdict = await lastValueFrom(this.transformToObservable(await handler(message.value, new EffectCommandContext([message, partition, topic, lease]))));
        } catch (error) {
          // The handler answers with verdicts; a throw is NestJS's pipeline failing (it logged the cause, and hands over only this).
          verdict = { kind: 'failed', error: new EffectdError('internal', `the handler pipeline failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`) };
        }
        if (verdict.kind === 'abandoned') return false; // not answered, not committed, redelivered to the partition's next owner
        if (verdict.kind !== 'failed') break;
        // Tried again in place once the pause is over (its workflow's later commands wait behind it), while the partition is ours.
        await this.failed(where, verdict.error, lease);
        if (!lease.isActive()) return false;
      }
    } finally {
      this.deciding--;
    }
    this.failures.delete(where);
    if (verdict.kind === 'dead-letter') {
      const parked = deadLetter(this.settings.topics.deadLetters, { topic, partition, message }, verdict.reason, verdict.detail, new Date(), verdict.sender);
      if (!(await this.publish(parked.topic, parked, lease))) return false;
      this.metrics.deadLettered(verdict.reason);
      this.deadLettered({ from: where, ...(message.key ? { workflowId: message.key.toString() } : {}), ...(verdict.sender ? { tenant: verdict.sender.tenant, sender: verdict.sender.name } : {}), deadLetterTopic: this.settings.topics.deadLetters, reason: verdict.reason, detail: verdict.detail.slice(0, 300) });
      if (verdict.reply) await this.publishReply(verdict.reply, lease);
      return true;
    }
    return this.publishReply(verdict.reply, lease);
  }

  /**
   * A command the handler could not settle now: logged with its code, and the workflow's lane waits
   * (growing, capped, heartbeating) before the command is tried again, so a broken command cannot spin.
   */
  private async failed(where: string, error: EffectdError, lease: CommandLease): Promise<void> {
    const count = (this.failures.get(where) ?? 0) + 1;
    this.failures.delete(where);
    this.failures.set(where, count);
    if (this.failures.size > FAILURES_KEPT) this.failures.delete(this.failures.keys().next().value!);
    const { code, message } = error;
    const ms = backoffMs(count - 1, 500, FAILED_PAUSE_CAP_MS);
    this.log(`effectd kafka: ${where} failed (${code}: ${message}), failure ${count}; its workflow waits ${ms} ms, then the command is tried again`);
    await pauseWhile(ms, () => lease.isActive());
  }

  private async publishReply(reply: Reply, lease: CommandLease): Promise<boolean> {
    const outgoing = { key: reply.key, value: reply.value, headers: reply.correlationId ? { 'effectd-correlation-id': reply.correlationId } : {} };
    const outcomes = this.settings.topics.outcomes;
    if (reply.topic && reply.topic !== outcomes) {
      if (await this.publish(reply.topic, { topic: reply.topic, ...outgoing }, lease, 3)) return true;
      this.log(`effectd kafka: reply topic ${reply.topic} refused the outcome; published to ${outcomes} instead`);
    }
    return this.publish(outcomes, { topic: outcomes, ...outgoing }, lease);
  }

  /** Retries with capped backoff while the partition is ours (a broker restart is an outage to wait out). */
  private async publish(topic: string, message: Parameters<CoalescingPublisher['publish']>[0], lease: CommandLease, maxTries = Infinity): Promise<boolean> {
    for (let tries = 0; tries < maxTries; tries++) {
      try {
        await this.publisher!.publish({ ...message, topic });
        return true;
      } catch (error) {
        if (!lease.isActive()) return false;
        this.log(`effectd kafka: publish to ${topic} failed (${(error as Error).message}); retrying`);
        await sleep(backoffMs(tries, 100, 5_000));
      }
    }
    return false;
  }
}
