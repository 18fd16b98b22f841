// Every query of the Grafana dashboard, evaluated by a real Prometheus (Debian's package, see
// scripts/ensure-debian-package.sh) that scrapes an effectd which just ran lost replies, escalations,
// a resolution, resubmissions and a compensated saga: each query must parse, and each must find
// series (Kafka lag and dead letters excepted: no Kafka here).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

const PROMETHEUS = process.env.EFFECTD_PROMETHEUS ?? '/usr/bin/prometheus';
interface Panel { title: string; type: string; targets?: { expr: string }[]; panels?: Panel[] }
const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/effectd.json', 'utf8')) as { panels: Panel[] };
const queries = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
// Grafana's interval variables, as Grafana would fill them in for a short time range.
const grafana = (expr: string) => expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '5m');
const NEEDS_KAFKA = /effectd_kafka_consumer_lag|effectd_commands_dead_lettered_total/;

let promUrl: string;
async function promValue(expr: string): Promise<number> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`).catch(() => undefined);
  const body = res?.ok ? ((await res.json()) as { data: { result: { value: [number, string] }[] } }) : undefined;
  return Number(body?.data.result[0]?.value[1] ?? Number.NaN);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('the Grafana dashboard against a real Prometheus', () => {
  const sims: RunningSimulator[] = [];
  let effectd: InProcessEffectd;
  let prometheus: ChildProcess;
  let promLog = '';

  beforeAll(async () => {
    if (!existsSync(PROMETHEUS)) throw new Error(`${PROMETHEUS} is missing: apt-get install -y prometheus (npm test does it: scripts/ensure-debian-package.sh)`);
    const [payments, weak, travel, email] = await Promise.all([startSimulator('payments', { options: { searchLagMs: 100 } }), startSimulator('weak'), startSimulator('travel'), startSimulator('email')]);
    sims.push(payments, weak, travel, email);
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url, weak: weak.url, travel: travel.url, email: email.url }, { 'payments.charge': { settleWindowMs: 3_000 } }) });
    const dir = tempDir('effectd-prometheus-');
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const target = new URL(effectd.url).host;
    // The shipped scrape config, pointed at this effectd and scraping every second.
    const shipped = readFileSync('deploy/prometheus/prometheus.yml', 'utf8');
    expect(shipped).toContain('targets: ["effectd:8080"]');
    writeFileSync(join(dir, 'prometheus.yml'), shipped.replace('targets: ["effectd:8080"]', `targets: ["${target}"]`).replace(/scrape_interval: \d+s/g, 'scrape_interval: 1s'));
    prometheus = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
    prometheus.stderr!.on('data', (d: Buffer) => (promLog += d.toString()));
    await waitFor(`Prometheus to scrape effectd (${promLog})`, async () => ((await promValue('count_over_time(up{job="effectd"}[1m])')) >= 2 ? true : undefined), 30_000, 250);

    // The run, while Prometheus watches (as in production: counters start at 0 before they move).
    // The lost charge is the background reconciler's to settle (its panels are checked): no inline settle.
    const submit = (cmd: Record<string, unknown>) => postJson(`${effectd.url}/v1/effects`, cmd, { ...effectd.agent, prefer: 'wait=0' });
    const run = Date.now().toString(36);

    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 2 }, action: { type: 'drop-after-mutation' } }] });
    await postJson(`${weak.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/notify', times: 2 }, action: { type: 'drop-after-mutation' } }] });
    const charges = [1, 2, 3].map((i) => ({ workflowId: `wf-${run}-${i}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-${i}`, amount: 1200 } }));
    for (const cmd of charges) await submit(cmd);
    await submit(charges[0]!); // a replay
    expect((await submit({ ...charges[0]!, args: { invoiceId: `INV-${run}-1`, amount: 1300 } })).status).toBe(422);
    const notes = await Promise.all([1, 2].map((i) => submit({ workflowId: `wf-${run}-n${i}`, step: 1, tool: 'weak.notify', args: { channel: 'ops', about: `note ${i}`, text: `note ${i}` } })));
    await waitFor('notifications escalated and the lost charge reconciled', async () => {
      const open = (await getJson(`${effectd.url}/v1/effects?state=unknown,dispatching&limit=100`, effectd.operator)).body.effects;
      return open.length === 0 ? true : undefined;
    }, 15_000, 100);
    await postJson(`${effectd.url}/v1/effects/${notes[0]!.body.effectId}/resolve`, { outcome: 'committed', receipt: 'msg-1', reason: 'seen in #ops' }, effectd.operator);
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges' }, action: { type: 'status', status: 402, body: { error: { type: 'card_error', code: 'card_declined' } } } }] });
    const saga = await postJson(`${effectd.url}/v1/sagas`, { saga: 'trip-booking', workflowId: `trip-${run}`, input: { tripId: run, traveller: { name: 'Ana Lima', email: 'ana@example.com' }, flight: 'TP1946', date: '2027-06-12', hotel: 'Hotel Ribeira', nights: 2, amount: '412.00' } }, effectd.agent);
    expect(saga.body.status).toBe('compensated');

    // Prometheus has seen the end of the run, twice.
    const attempts = async () => (await effectd.runtime.metrics.scrape()).match(/^effectd_attempts_total\{.*\} (\d+)$/gm)!.reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
    const expected = await attempts();
    await waitFor('Prometheus to see every attempt', async () => ((await promValue('sum(effectd_attempts_total)')) === expected ? true : undefined), 15_000, 250);
    await new Promise((r) => setTimeout(r, 2_100));
  }, 90_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      await new Promise<void>((done) => {
        prometheus.once('exit', () => done());
        prometheus.kill('SIGTERM');
      });
    }
    await effectd?.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it('every panel query parses and finds series', async () => {
    expect(queries.length).toBeGreaterThan(25);
    const empty: string[] = [];
    for (const { panel, expr } of queries) {
      const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(grafana(expr))}`);
      const body = (await res.json()) as { status: string; error?: string; data?: { result: unknown[] } };
      expect(body.status, `panel "${panel}": ${expr}: ${body.error}`).toBe('success');
      if (!NEEDS_KAFKA.test(expr) && (body.data?.result.length ?? 0) === 0) empty.push(`${panel}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });

  it('the numbers an on-call engineer reads first are the run\'s', async () => {
    const value = (expr: string) => promValue(grafana(expr));
    const stat = (title: string) => queries.find((q) => q.panel === title)!.expr;
    expect(await value(stat('Waiting for a human'))).toBe(1);
    expect(await value(stat('Open unknowns'))).toBe(0);
    expect(await value(stat('Oldest unknown'))).toBeGreaterThan(0);
    expect(await value(stat('Duplicates prevented (24 h)'))).toBeGreaterThanOrEqual(1);
    expect(await value('sum(max by (saga, outcome) (effectd_saga_runs_total{outcome="compensated"}))')).toBe(1);
  });
});
