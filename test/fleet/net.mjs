// The host layer of the fleet: one network namespace per host, a veth into one bridge, an address
// 10.77.0.<octet>/24 each; the harness itself sits on the bridge as 10.77.0.1 (the control host).
// EFFECTD_FLEET_NET=<n> (1–250) builds fleet n instead — bridge efleet<n>, namespaces efl<n>-*, 10.77.<n>.0/24 —
// so that two fleets (a run and a scale-out measurement) can exist side by side.
// Partitions are iptables DROP rules inside the two hosts' own namespaces, so deleting a namespace
// deletes its rules: nothing of the fleet is left in the machine's own tables.
import { execFileSync, spawn } from 'node:child_process';

const NET = Number(process.env.EFFECTD_FLEET_NET ?? 0);
if (!Number.isInteger(NET) || NET < 0 || NET > 250) throw new Error(`EFFECTD_FLEET_NET must be an integer 0–250, not ${process.env.EFFECTD_FLEET_NET}`);
export const BRIDGE = `efleet${NET}`;
export const NS_PREFIX = NET === 0 ? 'efl-' : `efl${NET}-`;
export const SUBNET = `10.77.${NET}`;
/** The fleet's addresses, for pg_hba.conf and the like. */
export const CIDR = `${SUBNET}.0/24`;
const VETH = NET === 0 ? 'efl' : `efl${NET}x`;
export const CONTROL_IP = `${SUBNET}.1`;

export function sh(cmd, args, options = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
}
const quiet = (cmd, args) => {
  try {
    return sh(cmd, args);
  } catch {
    return '';
  }
};

/** A host: its name, namespace and address. */
export function host(name, octet) {
  return { name, octet, ns: `${NS_PREFIX}${name}`, ip: `${SUBNET}.${octet}` };
}

export function createBridge() {
  sh('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  sh('ip', ['addr', 'add', `${CONTROL_IP}/24`, 'dev', BRIDGE]);
  sh('ip', ['link', 'set', BRIDGE, 'up']);
}

export function createHost(h) {
  const outside = `${VETH}${h.octet}h`;
  const inside = `${VETH}${h.octet}n`;
  sh('ip', ['netns', 'add', h.ns]);
  sh('ip', ['link', 'add', outside, 'type', 'veth', 'peer', 'name', inside]);
  sh('ip', ['link', 'set', inside, 'netns', h.ns]);
  sh('ip', ['link', 'set', outside, 'master', BRIDGE]);
  sh('ip', ['link', 'set', outside, 'up']);
  const inNs = (...args) => sh('ip', ['netns', 'exec', h.ns, ...args]);
  inNs('ip', 'link', 'set', inside, 'name', 'eth0');
  inNs('ip', 'addr', 'add', `${h.ip}/24`, 'dev', 'eth0');
  inNs('ip', 'link', 'set', 'eth0', 'up');
  inNs('ip', 'link', 'set', 'lo', 'up');
}

/** Runs `cmd args` inside the host (ip netns exec execs it: the child's pid is the program's). */
export function spawnIn(h, cmd, args, options = {}) {
  return spawn('ip', ['netns', 'exec', h.ns, cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...options });
}
export function execIn(h, cmd, args, options = {}) {
  return sh('ip', ['netns', 'exec', h.ns, cmd, ...args], options);
}

const DROP = (peer) => [['INPUT', '-s', peer.ip], ['OUTPUT', '-d', peer.ip]];

/** Cuts every packet between a and b, both ways (each side drops what comes from and goes to the other). */
export function partition(a, b) {
  for (const [self, peer] of [[a, b], [b, a]]) {
    for (const rule of DROP(peer)) execIn(self, 'iptables', ['-w', '-I', rule[0], rule[1], rule[2], '-j', 'DROP']);
  }
}
export function heal(a, b) {
  for (const [self, peer] of [[a, b], [b, a]]) {
    for (const rule of DROP(peer)) {
      try {
        execIn(self, 'iptables', ['-w', '-D', rule[0], rule[1], rule[2], '-j', 'DROP']);
      } catch {
        /* already healed */
      }
    }
  }
}

const ISOLATE = [['INPUT', '-i'], ['OUTPUT', '-o']];

/** Cuts the host from every other host and from the control host (its loopback stays up). */
export function isolate(h) {
  for (const [chain, dir] of ISOLATE) execIn(h, 'iptables', ['-w', '-I', chain, dir, 'eth0', '-j', 'DROP']);
}
export function unisolate(h) {
  for (const [chain, dir] of ISOLATE) {
    try {
      execIn(h, 'iptables', ['-w', '-D', chain, dir, 'eth0', '-j', 'DROP']);
    } catch {
      /* already healed */
    }
  }
}

/** Every namespace of the fleet (ours by name), whatever run created it. */
export function fleetNamespaces() {
  return quiet('ip', ['netns', 'list']).split('\n').map((line) => line.split(' ')[0]).filter((name) => name?.startsWith(NS_PREFIX));
}

/**
 * Tears everything down: every process inside a fleet namespace (SIGCONT first, for a paused one,
 * then SIGKILL), the namespaces (their veths and iptables rules go with them), the bridge.
 */
export function destroyAll(log = () => {}) {
  for (const ns of fleetNamespaces()) {
    const pids = quiet('ip', ['netns', 'pids', ns]).split('\n').map((p) => p.trim()).filter(Boolean).map(Number);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    quiet('ip', ['netns', 'del', ns]);
    log(`removed namespace ${ns}${pids.length ? ` (killed ${pids.length} processes)` : ''}`);
  }
  for (const line of quiet('ip', ['-o', 'link', 'show']).split('\n')) {
    const name = /^\d+: ([^:@]+)/.exec(line)?.[1];
    if (name && name.startsWith(VETH) && /^\d+h$/.test(name.slice(VETH.length))) quiet('ip', ['link', 'del', name]);
  }
  if (quiet('ip', ['link', 'show', BRIDGE])) {
    quiet('ip', ['link', 'del', BRIDGE]);
    log(`removed bridge ${BRIDGE}`);
  }
}
