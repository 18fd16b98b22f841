// Toxiproxy (github.com/Shopify/toxiproxy) inside each effectd host: effectd reaches PostgreSQL and
// the provider through 127.0.0.1 ports of its own host, proxied to the real hosts, so that a slow or
// broken link can be switched on for one instance through Toxiproxy's HTTP API. The proxy dials out
// from the effectd host's own address, so iptables partitions of that host still apply.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sh } from './net.mjs';
import { startProc } from './services.mjs';

export const VERSION = '2.5.0';
export const API_PORT = 8474;
const DIR = process.env.EFFECTD_TOXIPROXY_DIR ?? join(homedir(), '.cache', 'effectd', `toxiproxy-${VERSION}`);

/** The server binary, built from the Go module proxy into the cache dir the first time (about 1.5 min). */
export function binary() {
  const bin = join(DIR, 'server');
  if (existsSync(bin)) return bin;
  mkdirSync(DIR, { recursive: true });
  try {
    sh('go', ['install', `github.com/Shopify/toxiproxy/v2/cmd/server@v${VERSION}`], { env: { ...process.env, GOBIN: DIR }, cwd: '/tmp', stdio: 'inherit' });
  } catch (error) {
    throw new Error(`could not build Toxiproxy ${VERSION} with Go (go install github.com/Shopify/toxiproxy/v2/cmd/server@v${VERSION}, GOBIN=${DIR}): ${error.message}`);
  }
  return bin;
}

/**
 * Starts Toxiproxy in host `h` with one proxy per upstream: { name: { listen: port, upstream: 'ip:port' } }.
 * Returns its API client and the local address of each proxy.
 */
export async function start(runDir, h, upstreams) {
  const proxies = Object.entries(upstreams).map(([name, { listen, upstream }]) => ({ name, listen: `127.0.0.1:${listen}`, upstream, enabled: true }));
  const file = join(runDir, `${h.name}-toxiproxy.json`);
  writeFileSync(file, JSON.stringify(proxies, null, 2));
  const proc = startProc(runDir, h, `${h.name}-toxiproxy`, binary(), ['-host', h.ip, '-port', String(API_PORT), '-config', file]);
  const api = `http://${h.ip}:${API_PORT}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${api}/proxies`);
      if (res.ok && Object.keys(await res.json()).length === proxies.length) break;
    } catch {
      /* not yet */
    }
    if (!proc.alive || Date.now() > deadline) throw new Error(`Toxiproxy did not come up in ${h.name} (see ${proc.logFile})`);
    await sleep(300);
  }
  return { host: h, proc, api, proxies: proxies.map((p) => p.name), local: Object.fromEntries(proxies.map((p) => [p.name, p.listen])) };
}

async function call(api, method, path, body) {
  const res = await fetch(`${api}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body), signal: AbortSignal.timeout(5_000) });
  if (!res.ok && !(method === 'DELETE' && res.status === 404)) throw new Error(`Toxiproxy ${method} ${path}: ${res.status} ${await res.text()}`);
}

/** Adds each toxic to every proxy of the host; returns what was added, for heal(). */
export async function addToxics(tp, toxics) {
  for (const proxy of tp.proxies) for (const toxic of toxics) await call(tp.api, 'POST', `/proxies/${proxy}/toxics`, toxic);
  return toxics.map((t) => t.name);
}
export async function removeToxics(tp, names) {
  for (const proxy of tp.proxies) for (const name of names) await call(tp.api, 'DELETE', `/proxies/${proxy}/toxics/${name}`);
}

/** slow-link: 200–500 ms each way (350 ± 150 ms), on every connection. */
export const SLOW = [
  { name: 'slow-down', type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 350, jitter: 150 } },
  { name: 'slow-up', type: 'latency', stream: 'upstream', toxicity: 1, attributes: { latency: 100, jitter: 50 } },
];
/** broken-link: a third of the connections reset after 1 s, every connection cut after 32 KiB from upstream. */
export const BROKEN = [
  { name: 'reset', type: 'reset_peer', stream: 'upstream', toxicity: 0.33, attributes: { timeout: 1_000 } },
  { name: 'cut', type: 'limit_data', stream: 'downstream', toxicity: 1, attributes: { bytes: 32_768 } },
];
