/**
 * Ledger benchmark (not a test): appends/s and the shell's overhead per effect, SQLite vs PostgreSQL,
 * in one run. Overhead = shell latency − a direct call to the same local provider, interleaved
 * so both see the same machine state.
 *
 *   npm run bench:ledger [-- --effects 2000 --appends 5000 --pg postgres://…]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { spawnSimulator } from '@effectd/simulators';
import type { Ledger } from '../../../src/ledger/ledger.port.js';
import { NO_STREAM } from '../../../src/ledger/ledger.port.js';
import { GroupCommitLedger } from '../../../src/ledger/group-commit-ledger.js';
import { PostgresLedger } from '../../../src/ledger/postgres-ledger.js';
import { SqliteLedger } from '../../../src/ledger/sqlite-ledger.js';
import { loadConfig } from '../../../src/config/config-loader.js';
import { loadSettings } from '../../../src/config/settings-loader.js';
import { httpExchange } from '../../../src/providers/http-exchange.js';
import { buildRequest } from '../../../src/providers/http-provider.js';
import { ToolRegistry } from '../../../src/providers/tool-registry.js';
import { EffectShell } from '../../../src/shell/effect-shell.js';

const { values } = parseArgs({ options: { effects: { type: 'string', default: '2000' }, appends: { type: 'string', default: '5000' }, pg: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  console.log('Usage: npm run bench:ledger -- [--effects N (2000)] [--appends N (5000)] [--pg postgres://… (EFFECTD_TEST_PG_URL or the services:up default)]');
  process.exit(0);
}
const EFFECTS = Number(values.effects);
const APPENDS = Number(values.appends);
const PG_URL = values.pg ?? process.env.EFFECTD_TEST_PG_URL ?? 'postgres://effectd:effectd@127.0.0.1:5432/effectd_test';

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const sortedCopy = (xs: number[]) => [...xs].sort((a, b) => a - b);

async function appendsPerSecond(ledger: Ledger, writers: number): Promise<number> {
  const perWriter = Math.floor(APPENDS / writers);
  const started = performance.now();
  await Promise.all(Array.from({ length: writers }, async (_, w) => {
    for (let i = 0; i < perWriter; i++) {
      const effectId = `eff_bench_${w}_${i}`;
      await ledger.append(`bench-${randomUUID()}`, [{ type: 'EffectDeclared', v: 1, at: Date.now(), effectId, tenant: 'bench', workflowId: effectId, step: '1', slot: '0', tool: 'payments.charge', contractVersion: 1, intentDigest: 'd', args: { amount: 1 }, target: 't', principal: 'bench' }], NO_STREAM);
    }
  }));
  return (perWriter * writers) / ((performance.now() - started) / 1000);
}

async function overhead(ledger: Ledger, tools: ToolRegistry): Promise<{ shell: number[]; direct: number[] }> {
  // The service runs every ledger behind group commit; measure the shell the way it runs.
  const shell = new EffectShell({ ledger: new GroupCommitLedger(ledger), tools, secret: Buffer.alloc(32, 7), instanceId: 'bench' });
  const charge = tools.get('payments.charge')!;
  const run = randomUUID().slice(0, 8);
  const shellMs: number[] = [];
  const directMs: number[] = [];
  for (let i = 0; i < EFFECTS + 100; i++) {
    const t0 = performance.now();
    const direct = await httpExchange(buildRequest(charge, { args: { invoiceId: `D-${run}-${i}`, amount: 4900, currency: 'usd' }, providerKey: `direct-${run}-${i}`, reference: `direct-${run}-${i}` }));
    const t1 = performance.now();
    const answer = await shell.execute({ workflowId: `bench-${run}-${i}`, step: 1, tool: 'payments.charge', args: { invoiceId: `S-${run}-${i}`, amount: 4900 } }, { tenant: 'default', actor: 'ledger-bench' });
    const t2 = performance.now();
    if (direct.kind !== 'response' || answer.outcome.status !== 'done') throw new Error(`bench call failed: ${JSON.stringify(direct.kind)} / ${answer.outcome.message}`);
    if (i >= 100) {
      // the first 100 warm up JIT, sockets and caches
      directMs.push(t1 - t0);
      shellMs.push(t2 - t1);
    }
  }
  return { shell: shellMs, direct: directMs };
}

async function main() {
  const payments = await spawnSimulator('payments');
  const tools = new ToolRegistry(loadConfig({ providerUrlVariables: loadSettings(process.env).providerUrls, providerUrls: { payments: payments.url } }));
  const rows: string[][] = [];
  const ledgers: [string, () => Promise<Ledger>][] = [
    ['sqlite (WAL, synchronous=FULL)', async () => new SqliteLedger(join(mkdtempSync(join(tmpdir(), 'effectd-bench-')), 'ledger.db'))],
    ['postgres (synchronous_commit=on)', async () => PostgresLedger.open({ connectionString: PG_URL, schema: `bench_${process.pid}` })],
  ];
  try {
    for (const [name, open] of ledgers) {
      let ledger: Ledger;
      try {
        ledger = await open();
      } catch (error) {
        rows.push([name, `unavailable: ${(error as Error).message}`, '', '', '', '', '']);
        continue;
      }
      process.stderr.write(`${name}: ${APPENDS} appends (1 writer)…\n`);
      const single = await appendsPerSecond(ledger, 1);
      process.stderr.write(`${name}: ${APPENDS} appends (16 writers)…\n`);
      const many = await appendsPerSecond(ledger, 16);
      process.stderr.write(`${name}: ${EFFECTS} effects through the shell vs direct calls…\n`);
      const { shell, direct } = await overhead(ledger, tools);
      const [s, d] = [sortedCopy(shell), sortedCopy(direct)];
      rows.push([name, single.toFixed(0), many.toFixed(0), quantile(d, 0.5).toFixed(2), quantile(s, 0.5).toFixed(2), (quantile(s, 0.5) - quantile(d, 0.5)).toFixed(2), (quantile(s, 0.99) - quantile(d, 0.99)).toFixed(2)]);
      if (ledger instanceof PostgresLedger) await ledger.dropSchema();
      await ledger.close();
    }
  } finally {
    await payments.stop();
  }
  const header = ['ledger', 'appends/s (1 writer)', 'appends/s (16 writers)', 'direct p50 ms', 'shell p50 ms', 'overhead p50 ms', 'overhead p99 ms'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  console.log(`\neffectd ledger benchmark — ${EFFECTS} effects, ${APPENDS} appends, node ${process.version}, ${new Date().toISOString()}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of rows) console.log(line(row));
  console.log('\noverhead = shell latency − direct provider call latency at the same percentile (targets: p50 ≤ 2 ms SQLite, ≤ 5 ms PostgreSQL)');
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
