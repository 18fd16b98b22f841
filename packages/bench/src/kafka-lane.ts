import { randomBytes } from 'node:crypto';
import { mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { AssignerProtocol, Kafka, logLevel, Partitioners, type Admin } from 'kafkajs';
import { EffectClient } from '../../../src/sdk/effect-client.js';
import { sleep } from './bench-http.js';
import { EffectdProcess, type EffectdEndpoint } from './effectd-fleet.js';
import { CodedError } from '../../../src/shared/coded-error.js';

export interface KafkaPairOptions {
  root: string;
  brokers: string[];
  /** Makes the topics and the consumer group this run's own. */
  runTag: string;
  config: string;
  log: WriteStream;
}

const PARTITIONS = 6;
/** The broker's floor (group.min.session.timeout.ms): how soon the group notices a SIGKILLed member. */
export const KAFKA_SESSION_TIMEOUT_MS = 6_000;

/** Whether a broker answers at all (metadata within a few seconds); the reason when it does not. */
export async function kafkaUnreachable(brokers: string[]): Promise<string | undefined> {
  const kafka = new Kafka({ clientId: 'effectd-bench-probe', brokers, logLevel: logLevel.NOTHING, connectionTimeout: 1_500, retry: { retries: 1, initialRetryTime: 200 } });
  const admin = kafka.admin();
  try {
    await withTimeout(admin.connect().then(() => admin.listTopics()), 5_000, `no answer from ${brokers.join(',')} within 5 s`);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Two `effectd start --kafka … --group <this run's group>` processes on one ledger (a shared SQLite
 * file, one secret), consuming this run's own topics; the agent publishes through EffectClient.
 * The rebalance fault SIGKILLs whichever of them holds the workflow's partition, so the group hands
 * the partition to the other (after the session timeout), and starts the victim again.
 */
export class KafkaPair {
  readonly instances: EffectdProcess[];
  private restarting: Promise<unknown> = Promise.resolve();
  private restartFailure: unknown;
  kills = 0;

  private constructor(
    private readonly admin: Admin,
    readonly group: string,
    readonly topics: { commands: string; outcomes: string; deadLetters: string },
    readonly client: EffectClient,
    instances: EffectdProcess[],
  ) {
    this.instances = instances;
  }

  static async open(options: KafkaPairOptions): Promise<KafkaPair> {
    const kafka = new Kafka({ clientId: 'effectd-bench', brokers: options.brokers, logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2_000 } });
    const admin = kafka.admin();
    await admin.connect();
    const suffix = `${options.runTag}-${randomBytes(3).toString('hex')}`;
    const topics = { commands: `effectd.bench.commands.${suffix}`, outcomes: `effectd.bench.outcomes.${suffix}`, deadLetters: `effectd.bench.dlq.${suffix}` };
    const group = `effectd-bench-${suffix}`;
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: topics.commands, numPartitions: PARTITIONS, replicationFactor: 1 },
        { topic: topics.outcomes, numPartitions: PARTITIONS, replicationFactor: 1 },
        { topic: topics.deadLetters, numPartitions: 1, replicationFactor: 1 },
      ],
    });
    const secret = randomBytes(32).toString('hex');
    const ledger = `sqlite:${join(options.root, 'kafka-ledger.db')}`;
    const dirs = ['kafka-a', 'kafka-b'].map((name) => {
      const dir = join(options.root, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    });
    const credentials = join(dirs[0]!, 'credentials.json');
    const env = {
      EFFECTD_SECRET: secret,
      EFFECTD_KAFKA_COMMANDS_TOPIC: topics.commands,
      EFFECTD_KAFKA_OUTCOMES_TOPIC: topics.outcomes,
      EFFECTD_KAFKA_DLQ_TOPIC: topics.deadLetters,
      EFFECTD_KAFKA_SESSION_TIMEOUT_MS: String(KAFKA_SESSION_TIMEOUT_MS),
    };
    // The first writes the credentials into its data dir; the second is given that file, so the
    // agent's one token is accepted by whichever instance holds the workflow's partition.
    const instances = dirs.map((dir, i) => new EffectdProcess(`kafka-${'ab'[i]}`, ['--data-dir', dir, '--config', options.config, '--ledger', ledger, '--kafka', options.brokers.join(','), '--group', group],
      i === 0 ? env : { ...env, EFFECTD_CREDENTIALS: credentials }, credentials, options.log, /effectd consuming /));
    let client: EffectClient | undefined;
    try {
      const { token } = await instances[0]!.start();
      await instances[1]!.start();
      client = await EffectClient.connect({ brokers: options.brokers, token, commandsTopic: topics.commands, outcomesTopic: topics.outcomes, timeoutMs: 2_000 });
      const pair = new KafkaPair(admin, group, topics, client, instances);
      await pair.ready();
      return pair;
    } catch (error) {
      await client?.close();
      await Promise.all(instances.map((i) => i.stop()));
      await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
      await admin.disconnect();
      throw error;
    }
  }

  /** Both instances run and the group is stable with both of them: the state a rebalance cell starts from. */
  async ready(timeoutMs = 30_000): Promise<void> {
    await this.settled();
    for (const instance of this.instances) if (!instance.running) await instance.start();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const members = await this.members().catch(() => undefined);
      const pids = this.instances.map((i) => i.pid);
      if (members && members.state === 'Stable' && members.list.length === 2 && members.list.every((m) => pids.includes(m.pid))) return;
      if (Date.now() > deadline) throw new CodedError('unavailable', `the Kafka group ${this.group} did not become stable with both effectd instances within ${timeoutMs / 1000} s (${JSON.stringify(members)})`);
      await sleep(200);
    }
  }

  /** An instance that is up, for reads over HTTP (escalations, saga views). */
  endpoint(): EffectdEndpoint {
    const live = this.instances.find((i) => i.running);
    if (!live) throw new CodedError('unavailable', 'no effectd instance of the Kafka pair is running');
    return live.endpoint;
  }

  /**
   * SIGKILLs the instance whose consumer holds the workflow's partition (murmur2 of the workflowId,
   * as every Kafka client computes it), and starts it again in the background on the same data
   * dir. False when no live member held the partition (the group was already moving).
   */
  async killPartitionHolder(workflowId: string): Promise<{ killed: string; partition: number } | undefined> {
    const partition = Partitioners.DefaultPartitioner()({
      topic: this.topics.commands,
      partitionMetadata: Array.from({ length: PARTITIONS }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] })),
      message: { key: workflowId, value: null },
    });
    const members = await this.members();
    const holder = members.list.find((m) => m.partitions.includes(partition));
    const victim = this.instances.find((i) => i.pid !== undefined && i.pid === holder?.pid);
    if (!victim) return undefined;
    await victim.kill();
    this.kills += 1;
    this.restarting = victim.start().catch((error: unknown) => {
      this.restartFailure = error;
    });
    return { killed: victim.name, partition };
  }

  /** Waits for an instance the fault killed to be up again. */
  async settled(): Promise<void> {
    await this.restarting;
    if (this.restartFailure !== undefined) {
      const failure = this.restartFailure;
      this.restartFailure = undefined;
      throw failure;
    }
  }

  async close(): Promise<void> {
    await this.restarting;
    await this.client.close();
    await Promise.all(this.instances.map((i) => i.stop()));
    await this.admin.deleteTopics({ topics: Object.values(this.topics) }).catch(() => undefined);
    await this.admin.disconnect().catch(() => undefined);
  }

  private async members(): Promise<{ state: string; list: { pid: number; partitions: number[] }[] }> {
    const { groups } = await this.admin.describeGroups([this.group]);
    const group = groups[0];
    if (!group) return { state: 'Dead', list: [] };
    return {
      state: group.state,
      list: group.members.map((m) => {
        const decoded = m.memberAssignment.length > 0 ? AssignerProtocol.MemberAssignment.decode(m.memberAssignment) : null;
        return { pid: Number(/effectd-(\d+)/.exec(m.clientId)?.[1] ?? -1), partitions: decoded?.assignment[this.topics.commands] ?? [] };
      }),
    };
  }
}

function withTimeout<T>(work: Promise<T>, ms: number, why: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(why)), ms);
    work.then((v) => {
      clearTimeout(timer);
      resolve(v);
    }, (error: unknown) => {
      clearTimeout(timer);
      reject(error instanceof Error ? error : new Error(String(error)));
    });
  });
}
