import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Kafka, logLevel, type Admin, type IHeaders, type KafkaMessage } from 'kafkajs';
import pg from 'pg';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Credential } from '../../src/runtime/credentials.js';
import { loadSettings, type Environment } from '../../src/config/settings-loader.js';
import { createRuntime, type EffectdRuntime, type RuntimeOptions } from '../../src/runtime/effectd-runtime.js';
import { EffectClient } from '../../src/sdk/index.js';
import { startKafkaIngress, type KafkaIngress } from '../../src/transport/kafka/kafka-ingress.js';
import { kafkaIngressSettings, type KafkaTopics } from '../../src/transport/kafka/kafka-settings.js';
import { authHeaders } from './effectd-harness.js';
import { kafkaBrokers, testPostgresUrl } from './services.js';

/** A short id for this run: topics, groups, schemas and workflow ids carry it, so runs never see each other's data. */
export function runId(label: string): string {
  return `${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export function testKafka(clientId = 'effectd-test'): Kafka {
  return new Kafka({ clientId, brokers: kafkaBrokers(), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 3_000 } });
}

export interface RunTopics extends KafkaTopics {
  /** A commands topic nobody consumes (for timeout tests). */
  idle: string;
  drop(): Promise<void>;
}

/** Fresh commands(6) / outcomes(6) / dlq(1) topics for one test file; `drop()` deletes them. */
export async function createRunTopics(run: string): Promise<RunTopics> {
  const names = { commands: `effectd.commands.${run}`, outcomes: `effectd.outcomes.${run}`, deadLetters: `effectd.dlq.${run}`, idle: `effectd.idle.${run}` };
  const admin = testKafka().admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: names.commands, numPartitions: 6, replicationFactor: 1 },
        { topic: names.outcomes, numPartitions: 6, replicationFactor: 1 },
        { topic: names.deadLetters, numPartitions: 1, replicationFactor: 1 },
        { topic: names.idle, numPartitions: 1, replicationFactor: 1 },
      ],
    });
  } finally {
    await admin.disconnect();
  }
  return {
    ...names,
    drop: async () => {
      const a = testKafka().admin();
      await a.connect();
      await a.deleteTopics({ topics: Object.values(names) }).catch(() => {});
      await a.disconnect();
    },
  };
}

/** `postgres://…/effectd_test?schema=<fresh>` plus a way to drop that schema afterwards. */
export function freshPostgresSchema(run: string): { url: string; schema: string; drop(): Promise<void> } {
  const schema = `t_${run.replace(/[^a-z0-9]/g, '_')}`;
  const base = testPostgresUrl();
  return {
    url: `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`,
    schema,
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

export interface ReadRecord {
  partition: number;
  message: KafkaMessage;
}

/** Reads a topic from the beginning with a throwaway group until `until` is satisfied. */
export async function readTopic(topic: string, until: (records: ReadRecord[]) => boolean, timeoutMs = 15_000): Promise<ReadRecord[]> {
  const consumer = testKafka().consumer({ groupId: runId('reader'), maxWaitTimeInMs: 100 });
  await consumer.connect();
  const records: ReadRecord[] = [];
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out reading ${topic}: ${records.length} records`)), timeoutMs);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          records.push({ partition, message });
          if (until(records)) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

export const header = (headers: IHeaders | undefined, name: string): string | undefined => {
  const value = headers?.[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value[0]?.toString() : value.toString();
};

export async function withAdmin<T>(fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

/** A fresh token for a credential of a test (at least 24 characters, as the credentials schema wants). */
export function testToken(label: string): string {
  return `efd_test_${label}_${randomBytes(18).toString('base64url')}`;
}

/**
 * Writes `<dir>/credentials.json`: the given credentials, or one agent (tenant default) and one
 * operator. Point every instance of one deployment at this file (EFFECTD_CREDENTIALS), as they share EFFECTD_SECRET.
 */
export function writeCredentials(dir: string, credentials: Credential[] = [
  { token: testToken('agent'), role: 'agent', tenant: 'default', name: 'test-agent' },
  { token: testToken('operator'), role: 'operator', tenant: '*', name: 'test-operator' },
]): { file: string; agentToken: string } {
  const file = join(dir, 'credentials.json');
  writeFileSync(file, `${JSON.stringify({ credentials }, null, 2)}\n`, { mode: 0o600 });
  const agent = credentials.find((c) => c.role === 'agent');
  if (!agent) throw new Error('writeCredentials needs an agent credential');
  return { file, agentToken: agent.token };
}

/** The header a command carries its sender's credential in. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface KafkaEffectdProcess {
  child: ChildProcess;
  pid: number;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `effectd start --no-http --kafka …` as its own OS process (compiled dist/); resolves once it consumes. */
export function spawnKafkaEffectd(args: string[], env: Record<string, string>): Promise<KafkaEffectdProcess> {
  const child = spawn(process.execPath, ['bin/effectd.js', 'start', '--no-http', '--kafka', kafkaBrokers().join(','), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`effectd did not start consuming within 30 s: ${output}`)), 30_000);
    child.once('exit', (code, signal) => reject(new Error(`effectd exited (${code ?? signal}): ${output}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      if (!/effectd consuming /.test(line)) return;
      clearTimeout(timer);
      resolve({
        child, pid: child.pid!, output: () => output,
        kill: (signal = 'SIGKILL') => new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill(signal);
        }),
      });
    });
  });
}

export interface KafkaFixture {
  topics: RunTopics;
  runtime: EffectdRuntime;
  ingress: KafkaIngress;
  /** Publishes as the runtime's first agent credential. */
  client: EffectClient;
  /** That agent credential's token, for raw producers (header: `bearer(token)`). */
  token: string;
  close(): Promise<void>;
}

/**
 * One in-process effectd consuming this run's own topics (PostgreSQL ledger in the run's schema),
 * and an EffectClient publishing to them as the runtime's agent. `credentials` replaces the default
 * ones; `log` sees the ingress's lines. `close` tears down what was started, in reverse.
 */
export async function startKafkaFixture(run: string, schemaUrl: string, runtimeOptions: Omit<RuntimeOptions, 'dataDir' | 'ledgerUrl' | 'settings'>, options: { env?: Environment; clientTimeoutMs?: number; credentials?: Credential[]; log?: (line: string) => void } = {}): Promise<KafkaFixture> {
  const topics = await createRunTopics(run);
  const dataDir = mkdtempSync(join(tmpdir(), 'effectd-kafka-'));
  if (options.credentials) writeCredentials(dataDir, options.credentials);
  const loaded = loadSettings(options.env ?? {});
  const runtime = await createRuntime({ dataDir, ledgerUrl: schemaUrl, settings: loaded, ...runtimeOptions });
  const settings = kafkaIngressSettings(kafkaBrokers().join(','), loaded.kafka, { groupId: `effectd-${run}` });
  const ingress = await startKafkaIngress(runtime, { ...settings, topics }, { log: options.log ?? (() => {}) });
  const token = authHeaders(dataDir, 'agent').authorization!.slice('Bearer '.length);
  const client = await EffectClient.connect({ brokers: kafkaBrokers(), token, commandsTopic: topics.commands, outcomesTopic: topics.outcomes, timeoutMs: options.clientTimeoutMs ?? 20_000 });
  return {
    topics, runtime, ingress, client, token,
    close: async () => {
      await client.close();
      await ingress.close();
      await runtime.close();
      await topics.drop();
    },
  };
}
