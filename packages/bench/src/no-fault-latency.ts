import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpServer } from '../../../src/api/http-server.js';
import { loadSettings } from '../../../src/config/settings-loader.js';
import { createRuntime } from '../../../src/runtime/effectd-runtime.js';
import { startSimulator } from '@effectd/simulators';

/**
 * The no-fault path with and without inline settle (docs/inline-settle.md): sequential charges
 * that all succeed, against the payments simulator through effectd's HTTP API in this process, in
 * interleaved rounds of `Prefer: wait=0` and the default budget. Prints p50/p99 per round.
 * `node packages/bench/dist/packages/bench/src/no-fault-latency.js [charges per round] [rounds]`
 */
const perRound = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 3);
const payments = await startSimulator('payments', { options: {} });
const dataDir = mkdtempSync(join(tmpdir(), 'effectd-no-fault-'));
const settings = loadSettings(process.env);
const runtime = await createRuntime({ dataDir, settings, providerUrls: { payments: payments.url } });
const server = await startHttpServer(runtime, 0, '127.0.0.1', settings.http);
const { credentials } = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { credentials: { token: string; role: string }[] };
const token = credentials.find((c) => c.role === 'agent')!.token;

async function round(label: string, prefer: string | undefined, n: number): Promise<{ label: string; p50: number; p99: number }> {
  const ms: number[] = [];
  for (let i = 0; i < perRound; i++) {
    const started = performance.now();
    const res = await fetch(`${server.url}/v1/effects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(prefer ? { prefer } : {}) },
      body: JSON.stringify({ workflowId: `wf-${label}-${n}-${i}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${label}-${n}-${i}`, amount: 100 } }),
    });
    const body = (await res.json()) as { status?: string };
    if (body.status !== 'done') throw new Error(`a no-fault charge was not done: ${JSON.stringify(body)}`);
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  const at = (p: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]! * 100) / 100;
  return { label, p50: at(0.5), p99: at(0.99) };
}

try {
  await round('warm-up', undefined, 0);
  for (let n = 1; n <= rounds; n++) {
    for (const [label, prefer] of [['wait=0', 'wait=0'], ['default budget', undefined]] as const) {
      const r = await round(label.replace(/\W+/g, '-'), prefer, n);
      console.log(`round ${n} ${label.padEnd(15)} p50 ${r.p50} ms  p99 ${r.p99} ms  (${perRound} charges)`);
    }
  }
} finally {
  await server.close();
  await runtime.close();
  await payments.close();
  rmSync(dataDir, { recursive: true, force: true });
}
