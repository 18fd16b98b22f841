import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { spawnEffectdProcess, type EffectdProcess } from '../harness/effectd-process.js';
import { writeFastPaymentsConfig } from '../harness/tool-config-files.js';
import type { WorkersSpec } from './options.js';

/**
 * k effectd instances on one ledger schema, all with one ingress: HTTP (each its own port) or
 * Kafka (one consumer group, no HTTP), as the issue's lanes run them. One ingress per fleet keeps
 * an idle Kafka consumer's polling out of the HTTP lanes' CPU.
 */
export interface Fleet {
  label: string;
  ingress: 'http' | 'kafka';
  /** Which effectd build: 'this' (this checkout) or 'baseline' (--baseline DIR). */
  build: string;
  instances: EffectdProcess[];
  /** Worker processes per instance (1: no cluster). */
  workers: number;
  /** Every effectd process of the fleet now: each instance and, with workers, its worker processes (a replaced worker counts from its start). */
  pids(): number[];
  token: string;
  topics: { commands: string; outcomes: string; deadLetters: string };
  group: string;
  schema: string;
  /** The fleet's PostgreSQL connections carry it (application_name), so a lane charges only its own backends. */
  applicationName: string;
  stop(): Promise<void>;
}

export interface FleetSetup {
  run: string;
  dir: string;
  secret: string;
  ledgerUrl: string;
  brokers: string[];
  paymentsUrl: string;
}

export async function startFleet(ingress: 'http' | 'kafka', size: number, setup: FleetSetup, build: { name: string; root?: string } = { name: 'this' }, spec: WorkersSpec = { count: 1, sched: 'rr' }): Promise<Fleet> {
  const workers = spec.count;
  const cluster = workers > 1 ? `w${workers}${spec.sched === 'none' ? 'none' : ''}` : '';
  const label = `${build.name === 'this' ? '' : `${build.name}-`}${ingress}${size}${cluster}`;
  const kafka = ingress === 'kafka';
  const schema = `bench_tp_${setup.run}_${label.replace(/-/g, '_')}`;
  const topics = { commands: `effectd.commands.bench-${setup.run}-${label}`, outcomes: `effectd.outcomes.bench-${setup.run}-${label}`, deadLetters: `effectd.dlq.bench-${setup.run}-${label}` };
  const group = `effectd-bench-${setup.run}-${label}`;
  const token = `efd_agent_${randomBytes(24).toString('base64url')}`;
  const credentials = join(setup.dir, `credentials-${label}.json`);
  writeFileSync(credentials, JSON.stringify({ credentials: [{ token, role: 'agent', tenant: 'default', name: 'bench-agent' }] }), { mode: 0o600 });
  const config = writeFastPaymentsConfig(setup.dir, setup.paymentsUrl, 10_000);
  const env = {
    EFFECTD_SECRET: setup.secret, EFFECTD_CREDENTIALS: credentials,
    ...(workers > 1 ? { NODE_CLUSTER_SCHED_POLICY: spec.sched } : {}),
    EFFECTD_KAFKA_COMMANDS_TOPIC: topics.commands, EFFECTD_KAFKA_OUTCOMES_TOPIC: topics.outcomes, EFFECTD_KAFKA_DLQ_TOPIC: topics.deadLetters,
  };
  const applicationName = `effectd-bench-${setup.run}-${label}`;
  const ledgerUrl = `${setup.ledgerUrl}${setup.ledgerUrl.includes('?') ? '&' : '?'}schema=${schema}&application_name=${applicationName}`;
  if (kafka) await kafkaTopics(setup.brokers, Object.values(topics), 'create');
  const instances: EffectdProcess[] = [];
  const stop = async () => {
    for (const p of instances) await p.stop();
    if (kafka) await kafkaTopics(setup.brokers, Object.values(topics), 'delete');
  };
  try {
    for (let i = 0; i < size; i++) {
      const args = [...(workers > 1 ? ['--workers', String(workers)] : []), '--ledger', ledgerUrl, '--config', config, '--data-dir', join(setup.dir, `${label}-${i}`), ...(kafka ? ['--no-http', '--kafka', setup.brokers.join(','), '--group', group] : ['--port', '0'])];
      instances.push(await spawnEffectdProcess(args, env, build.root ? { root: build.root } : {}));
    }
    if (kafka) await waitForGroup(setup.brokers, group, size * workers);
  } catch (error) {
    await stop();
    throw error;
  }
  const pids = () => instances.flatMap((p) => [p.pid, ...childPids(p.pid)]);
  return { label, ingress, build: cluster ? `${build.name}-${cluster}` : build.name, instances, workers, pids, token, topics, group, schema, applicationName, stop };
}

/** A process's children (an effectd primary's workers), from /proc. */
function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function kafkaTopics(brokers: string[], names: string[], action: 'create' | 'delete'): Promise<void> {
  const admin = new Kafka({ clientId: 'effectd-bench', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    if (action === 'create') await admin.createTopics({ waitForLeaders: true, topics: names.map((topic) => ({ topic, numPartitions: topic.includes('.dlq.') ? 1 : 6, replicationFactor: 1 })) });
    else await admin.deleteTopics({ topics: names }).catch(() => {});
  } finally {
    await admin.disconnect();
  }
}

async function waitForGroup(brokers: string[], groupId: string, members: number): Promise<void> {
  const admin = new Kafka({ clientId: 'effectd-bench', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    for (let i = 0; i < 300; i++) {
      const { groups } = await admin.describeGroups([groupId]);
      if (groups[0]?.state === 'Stable' && groups[0].members.length === members) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`consumer group ${groupId} never became stable with ${members} members`);
  } finally {
    await admin.disconnect();
  }
}
