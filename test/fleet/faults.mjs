// Plays one fault of the nemesis schedule against the running fleet: the fault, the hold, the heal.
// `fleet` is the harness's live state: { runDir, H (hosts), effectd, kafka, pg: { primary, standby },
// toxiproxy (per effectd host), changedConfig, toolTimeoutMs, faultLog, log }. Restarted processes
// replace their entry in fleet.effectd / fleet.kafka.brokers; a failover moves fleet.pg.primary.
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs from 'kafkajs';
import * as net from './net.mjs';
import * as svc from './services.mjs';
import * as toxiproxy from './toxiproxy.mjs';
import { controller } from './kafka-quorum.mjs';

const BROKERS = ['k1', 'k2', 'k3'];

/** The partitions broker `name` leads (kafkajs metadata: quick, unlike a JVM), undefined when Kafka does not say. */
async function partitionsLed(fleet, name) {
  const admin = new kafkajs.Kafka({ clientId: 'fleet-nemesis', brokers: fleet.kafka.bootstrap, logLevel: kafkajs.logLevel.NOTHING, connectionTimeout: 2_000, requestTimeout: 4_000, retry: { retries: 1 } }).admin();
  try {
    await admin.connect();
    const { topics } = await admin.fetchTopicMetadata({ topics: ['effectd.commands', 'effectd.outcomes'] });
    return topics.flatMap((t) => t.partitions.filter((p) => `k${p.leader}` === name).map((p) => `${t.name}-${p.partitionId}`));
  } catch (error) {
    fleet.log(`could not ask Kafka which partitions ${name} leads: ${error.message}`);
    return undefined;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}
const ledNote = (partitions) => (partitions === undefined ? 'partition leaders unknown' : partitions.length ? `it led ${partitions.join(' ')}` : 'it led no partition');

function cut(fleet, a, peers) {
  for (const p of peers) net.partition(fleet.H[a], fleet.H[p]);
  return () => peers.forEach((p) => net.heal(fleet.H[a], fleet.H[p]));
}

async function killBroker(fleet, f, name, why) {
  const b = fleet.kafka.brokers.find((x) => x.name === name);
  const led = await partitionsLed(fleet, name);
  b.proc.signal('SIGKILL');
  fleet.faultLog({ action: 'fault', label: f.label, note: `SIGKILL broker ${name} (pid ${b.proc.pid})${why}; ${ledNote(led)}`, led });
  await sleep(f.holdMs);
  svc.startBroker(fleet.runDir, b, fleet.kafka.lib, fleet.kafka.heap);
  return `broker ${name} started again on its data dir`;
}

async function restartEffectd(fleet, name, changes, reason) {
  const e = fleet.effectd[name];
  const how = await svc.stopProc(e.proc);
  fleet.faultLog({ action: 'step', label: `${reason} ${name}`, note: `exited (${how.signal ?? `code ${how.code}`})` });
  const next = await svc.restartEffectd(fleet.runDir, e, changes);
  fleet.effectd[name] = next;
  await next.ready;
  fleet.faultLog({ action: 'step', label: `${reason} ${name}`, note: `ready again (pid ${next.proc.pid})${changes.config ? `, config ${changes.config}` : ''}` });
}

/**
 * What a fault must know before it starts, asked during the quiet before it: the active KRaft
 * controller (a JVM, 5–15 s on a loaded machine). Resolves to undefined when there is nothing to ask.
 */
export async function prepare(fleet, f) {
  if (f.kind !== 'kill-controller') return undefined;
  try {
    return { controller: await controller(fleet.kafka.lib, fleet.kafka.bootstrap) };
  } catch (error) {
    fleet.log(`could not ask the KRaft quorum for its leader: ${String(error.message).split('\n')[0]}`);
    return {};
  }
}

/** Plays fault `f` (`prepared`: what prepare() found); resolves after its heal, with the heal's note. */
export async function play(fleet, f, prepared = {}) {
  const { H, faultLog } = fleet;
  const others = (name) => Object.keys(H).filter((h) => h !== name);
  switch (f.kind) {
    case 'partition-ledger':
    case 'partition-brokers':
    case 'partition-provider': {
      const peers = { 'partition-ledger': ['pg1', 'pg2'], 'partition-brokers': BROKERS, 'partition-provider': ['sim'] }[f.kind];
      const healCut = cut(fleet, f.target, peers);
      faultLog({ action: 'fault', label: f.label, note: `iptables DROP both ways between ${f.target} and ${peers.join(', ')}` });
      await sleep(f.holdMs);
      healCut();
      return 'rules deleted';
    }
    case 'isolate-effectd':
    case 'partition-broker-minority': {
      net.isolate(H[f.target]);
      faultLog({ action: 'fault', label: f.label, note: `${f.target} cut from ${others(f.target).join(', ')} and the control host (DROP on its eth0)` });
      await sleep(f.holdMs);
      net.unisolate(H[f.target]);
      return 'rules deleted';
    }
    case 'pause-effectd': {
      const e = fleet.effectd[f.target];
      e.proc.signal('SIGSTOP');
      faultLog({ action: 'fault', label: f.label, note: `SIGSTOP ${f.target} (pid ${e.proc.pid}); lease = tool timeout ${fleet.toolTimeoutMs} ms + margin` });
      await sleep(f.holdMs);
      e.proc.signal('SIGCONT');
      return 'SIGCONT';
    }
    case 'kill-effectd': {
      const e = fleet.effectd[f.target];
      e.proc.signal('SIGKILL');
      faultLog({ action: 'fault', label: f.label, note: `SIGKILL ${f.target} (pid ${e.proc.pid})` });
      await sleep(f.holdMs);
      await e.proc.exited;
      const next = await svc.restartEffectd(fleet.runDir, e);
      fleet.effectd[f.target] = next;
      await next.ready;
      return `started again on the same config (pid ${next.proc.pid}), ready`;
    }
    case 'kill-broker':
      return killBroker(fleet, f, f.target, '');
    case 'kill-controller': {
      const id = prepared?.controller;
      const target = id > 0 ? `k${id}` : BROKERS[Math.floor(Date.now() / 1000) % 3];
      return killBroker(fleet, f, target, id > 0 ? ', the active KRaft controller' : ', controller unknown: a broker picked by the clock');
    }
    case 'pg-failover': {
      const { primary, standby } = fleet.pg;
      primary.proc.signal('SIGKILL');
      faultLog({ action: 'fault', label: f.label, note: `SIGKILL PostgreSQL primary ${primary.host.name} (pid ${primary.proc.pid}); promoting ${standby.host.name}` });
      svc.promote(standby);
      fleet.pg = { primary: standby, standby: undefined };
      fleet.log(`${standby.host.name} promoted`);
      await sleep(f.holdMs);
      return `none: ${standby.host.name} stays primary`;
    }
    case 'slow-link':
    case 'broken-link': {
      const tp = fleet.toxiproxy[f.target];
      const toxics = f.kind === 'slow-link' ? toxiproxy.SLOW : toxiproxy.BROKEN;
      const names = await toxiproxy.addToxics(tp, toxics);
      faultLog({ action: 'fault', label: f.label, note: `Toxiproxy on ${f.target}'s ${tp.proxies.join(', ')}: ${toxics.map((t) => `${t.type} ${JSON.stringify(t.attributes)} ${t.stream} toxicity ${t.toxicity}`).join('; ')}` });
      await sleep(f.holdMs);
      await toxiproxy.removeToxics(tp, names);
      return 'toxics removed';
    }
    case 'rolling-restart': {
      faultLog({ action: 'fault', label: f.label, note: `SIGTERM, wait for exit, start, wait for /readyz, one instance at a time; ${f.changed} comes back with ${fleet.changedConfig.what}` });
      for (const name of Object.keys(fleet.effectd)) {
        await restartEffectd(fleet, name, name === f.changed ? fleet.changedConfig.changes : {}, 'rolling-restart');
      }
      return 'all three restarted';
    }
    default:
      throw new Error(`the nemesis has no fault kind ${f.kind}`);
  }
}
