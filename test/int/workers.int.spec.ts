// `effectd start --workers 2`: one primary, two worker processes sharing the HTTP port (node:cluster),
// one PostgreSQL ledger (fresh schema), the payments simulator in its own process as ground truth.
// Concurrent duplicates spread over both workers make one effect and one charge each; a lost reply
// is settled once; /metrics merges the workers'; SIGHUP reaches every worker; a killed worker is
// replaced; SIGTERM drains all → 0.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnEffectdProcess, type EffectdProcess } from '../../packages/bench/src/harness/effectd-process.js';
import { spawnSimulator, simulatorCall, type SimulatorProcess } from '../../packages/simulators/src/process.js';
import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import { METRIC } from '../../src/metrics/metric-names.js';
import { ensureBuilt, tempDir, waitFor, writeFastPaymentsConfig } from '../support/effectd-harness.js';
import { freshPostgresSchema, runId } from '../support/kafka-harness.js';
import { testPostgresUrl } from '../support/services.js';

const TOOL_TIMEOUT_MS = 1_500; // lease = timeout + margin: a lost reply lapses into unknown fast

interface Answer { status: number; body: { status?: string; effectId?: string; receipt?: string; replayed?: boolean } }

/** One POST on a fresh connection (no keep-alive), so the cluster's round robin spreads the requests over the workers. */
function post(url: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(text) as Answer['body'] });
        } catch {
          resolve({ status: res.statusCode!, body: {} });
        }
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The worker processes of a primary (its children). */
function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('effectd start --workers 2 (real processes, PostgreSQL, payments simulator)', () => {
  const run = runId('workers');
  const schema = freshPostgresSchema(run);
  const dir = tempDir();
  const dataDir = join(dir, 'data');
  let payments: SimulatorProcess;
  let effectd: EffectdProcess;
  let ledger: PostgresLedger;
  let agent: Record<string, string>;
  let log = '';
  const UNSET = ['EFFECTD_SECRET', 'EFFECTD_CREDENTIALS', 'EFFECTD_WORKERS', 'EFFECTD_LEDGER'];
  const unsetValues = Object.fromEntries(UNSET.map((name) => [name, process.env[name]]));

  const oracleCharges = async () => (await simulatorCall<{ charges: { id: string; metadata: Record<string, string> }[] }>(payments.url, '/_oracle/state')).charges;
  /** Which processes appended the attempts (instance ids are effectd-<pid>-…). */
  const attemptPids = async () => {
    const pids = new Set<number>();
    for (const { event } of await ledger.readAll(0, 1_000_000)) if (event.type === 'AttemptStarted') pids.add(Number(event.instanceId.split('-')[1]));
    return pids;
  };
  /** An agent: submit, and re-submit the same command (safe by design) until it is done. */
  const submitUntilDone = async (command: Record<string, unknown>, tries = 30): Promise<{ answers: Answer[]; last: Answer }> => {
    const answers: Answer[] = [];
    for (let i = 0; i < tries; i++) {
      const answer = await post(`${effectd.url!}/v1/effects`, command, agent);
      answers.push(answer);
      // 409: the claim is held by a dispatch in flight (here: on the other worker); the agent asks again.
      if ((answer.status !== 200 && answer.status !== 409) || answer.body.status === 'done') return { answers, last: answer };
      await new Promise((r) => setTimeout(r, 500));
    }
    return { answers, last: answers[answers.length - 1]! };
  };

  beforeAll(async () => {
    await ensureBuilt();
    payments = await spawnSimulator('payments');
    const config = writeFastPaymentsConfig(dir, payments.url, TOOL_TIMEOUT_MS);
    // No EFFECTD_SECRET, no credentials file: the primary creates both in the data dir before it forks.
    // (Put back in afterAll: the next file in this worker shares its process.env.)
    for (const name of UNSET) delete process.env[name];
    const env = { EFFECTD_LOG_FORMAT: 'json' };
    effectd = await spawnEffectdProcess(['--workers', '2', '--port', '0', '--ledger', schema.url, '--config', config, '--data-dir', dataDir], env);
    effectd.child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    const token = (JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { credentials: { token: string; role: string }[] }).credentials.find((c) => c.role === 'agent')!.token;
    agent = { authorization: `Bearer ${token}` };
    ledger = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema: schema.schema });
  }, 60_000);

  afterAll(async () => {
    for (const [name, value] of Object.entries(unsetValues)) if (value !== undefined) process.env[name] = value;
    await effectd?.stop('SIGKILL');
    for (const pid of effectd ? children(effectd.pid) : []) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await payments?.stop();
    await ledger?.close();
    await schema.drop();
  });

  it('serves from two worker processes that share one port, one secret and one credentials file', async () => {
    expect(children(effectd.pid)).toHaveLength(2);
    expect(existsSync(join(dataDir, 'secret'))).toBe(true);
    const command = { workflowId: `wf-${run}-parity`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-parity`, amount: 1234 } };
    const first = await post(`${effectd.url!}/v1/effects`, command, agent);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'done', replayed: false });
    // The same command, many times, on fresh connections (so on both workers): the same answer, a replay.
    const again = await Promise.all(Array.from({ length: 8 }, () => post(`${effectd.url!}/v1/effects`, command, agent)));
    for (const a of again) expect(a).toMatchObject({ status: 200, body: { status: 'done', effectId: first.body.effectId, receipt: first.body.receipt, replayed: true } });
    expect((await oracleCharges()).filter((c) => c.metadata.invoice_id === `INV-${run}-parity`)).toHaveLength(1);
  });

  it('concurrent duplicates of many steps of one workflow, spread over both workers: one effect and one charge each, no 500', async () => {
    const steps = 24;
    const copies = 4;
    /** One round: every step submitted `copies` times at once, on fresh connections (the round robin spreads them). */
    const round = async (r: number) => {
      const invoice = (i: number) => `INV-${run}-race${r}-${i + 1}`;
      const commands = Array.from({ length: steps }, (_, i) => ({ workflowId: `wf-${run}-race`, step: `r${r}-${i + 1}`, tool: 'payments.charge', args: { invoiceId: invoice(i), amount: 2000 + i } }));
      const results = await Promise.all(commands.flatMap((command) => Array.from({ length: copies }, () => submitUntilDone(command))));
      const statuses = results.flatMap((res) => res.answers.map((a) => a.status));
      expect(statuses.filter((s) => s !== 200 && s !== 409)).toEqual([]);
      const inFlight = results.flatMap((res) => res.answers.filter((a) => a.status === 409));
      for (const a of inFlight) expect(a.body.effectId).toBeDefined();
      commands.forEach((_command, i) => {
        const mine = results.slice(i * copies, (i + 1) * copies).map((res) => res.last.body);
        expect(mine.map((b) => b.status)).toEqual(Array(copies).fill('done'));
        expect(new Set(mine.map((b) => b.effectId)).size).toBe(1);
        expect(new Set(mine.map((b) => b.receipt)).size).toBe(1);
      });
      const charges = (await oracleCharges()).filter((c) => c.metadata.invoice_id?.startsWith(`INV-${run}-race${r}-`));
      const perInvoice = new Map<string, number>();
      for (const c of charges) perInvoice.set(c.metadata.invoice_id!, (perInvoice.get(c.metadata.invoice_id!) ?? 0) + 1);
      expect([...perInvoice].filter(([, n]) => n > 1)).toEqual([]);
      expect(perInvoice.size).toBe(steps);
      console.log(`workers, round ${r}: ${steps * copies} concurrent submissions of ${steps} steps: ${inFlight.length} answered 409 (in flight on a worker) and were asked again; ${charges.length} charges`);
    };
    // Both workers must have carried out attempts. Connections are spread, but which copy wins a
    // step's claim is a race: a worker can lose every race of one round, so up to three rounds.
    const workers = children(effectd.pid);
    const bothWorked = async () => {
      const pids = await attemptPids();
      return workers.filter((pid) => pids.has(pid)).length === 2;
    };
    for (let r = 1; r <= 3; r++) {
      await round(r);
      if (await bothWorked()) break;
    }
    expect(await bothWorked()).toBe(true);
  }, 120_000);

  it('/metrics shows the whole instance whichever worker answers: counters summed over the workers, ledger gauges counted once', async () => {
    const scrape = () => new Promise<string>((resolve, reject) => {
      // A fresh connection each time (agent: false), so the round robin sends the scrapes to both workers.
      http.get(`${effectd.url!}/metrics`, { agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`/metrics answered ${res.statusCode}: ${text}`))));
      }).on('error', reject);
    });
    const value = (text: string, series: string) => text.split('\n').filter((line) => line.startsWith(series)).reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    const received = (text: string) => value(text, `${METRIC.commandsReceived}{ingress="http"}`);
    const before = received(await scrape());
    const sent = 10;
    const answers = await Promise.all(Array.from({ length: sent }, (_, i) => post(`${effectd.url!}/v1/effects`, { workflowId: `wf-${run}-metrics-${i}`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-metrics-${i}`, amount: 3000 + i } }, agent)));
    expect(answers.map((a) => a.status)).toEqual(Array(sent).fill(200));
    const declared = (await ledger.readAll(0, 1_000_000)).filter(({ event }) => event.type === 'EffectDeclared').length;
    // Whichever worker answers, it counts all of them.
    for (let i = 0; i < 6; i++) {
      const text = await scrape();
      expect(text).not.toContain('did not report');
      expect(received(text)).toBe(before + sent);
      expect(value(text, `${METRIC.effects}{`)).toBe(declared);
    }
  }, 60_000);

  it('a lost reply is settled once', async () => {
    await simulatorCall(payments.url, '/_admin/faults', { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    const command = { workflowId: `wf-${run}-lost`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-lost`, amount: 4321 } };
    const first = await post(`${effectd.url!}/v1/effects`, command, { ...agent, prefer: 'wait=0' });
    expect(first.status).toBe(200);
    expect(first.body.status).not.toBe('done');
    const { last } = await submitUntilDone(command, 40);
    expect(last.body).toMatchObject({ status: 'done', effectId: first.body.effectId });
    const charges = (await oracleCharges()).filter((c) => c.metadata.invoice_id === `INV-${run}-lost`);
    expect(charges.map((c) => c.id)).toEqual([last.body.receipt]);
  }, 60_000);

  it('SIGHUP reaches every worker: a token added to the credentials file is accepted by both', async () => {
    const file = join(dataDir, 'credentials.json');
    const book = JSON.parse(readFileSync(file, 'utf8')) as { credentials: Record<string, string>[] };
    const token = `efd_agent_${randomBytes(24).toString('base64url')}`;
    book.credentials.push({ token, role: 'agent', tenant: 'default', name: 'added-agent' });
    writeFileSync(file, JSON.stringify(book), { mode: 0o600 });
    process.kill(effectd.pid, 'SIGHUP');
    await waitFor('both workers to reload', async () => ((log.match(/reloaded 3 credentials/g) ?? []).length >= 2 ? true : undefined), 10_000);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(`${effectd.url!}/v1/effects`, { workflowId: `wf-${run}-hup`, step: i + 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-hup-${i}`, amount: 777 } }, { authorization: `Bearer ${token}` })));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
  });

  it('a killed worker is replaced and the port keeps serving', async () => {
    const [victim, survivor] = children(effectd.pid);
    process.kill(victim!, 'SIGKILL');
    const replaced = await waitFor('a new worker', async () => {
      const now = children(effectd.pid);
      return now.length === 2 && !now.includes(victim!) && /serves again/.test(log) ? now : undefined;
    }, 20_000, 100);
    expect(replaced).toContain(survivor);
    expect(log).toMatch(/"event":"WorkerDied"/);
    const command = { workflowId: `wf-${run}-after-kill`, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-after-kill`, amount: 888 } };
    const answers = await Promise.all(Array.from({ length: 6 }, () => submitUntilDone(command)));
    expect(answers.map((a) => a.last.body.status)).toEqual(Array(6).fill('done'));
    expect((await oracleCharges()).filter((c) => c.metadata.invoice_id === `INV-${run}-after-kill`)).toHaveLength(1);
  }, 40_000);

  it('SIGTERM drains every worker (commands in flight are answered) and the primary exits 0', async () => {
    await simulatorCall(payments.url, '/_admin/faults', { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', times: 100 }, action: { type: 'delay', ms: 600 } }] });
    const workers = children(effectd.pid);
    const inFlight = Array.from({ length: 6 }, (_, i) => post(`${effectd.url!}/v1/effects`, { workflowId: `wf-${run}-drain`, step: i + 1, tool: 'payments.charge', args: { invoiceId: `INV-${run}-drain-${i}`, amount: 500 + i } }, agent));
    await new Promise((r) => setTimeout(r, 250));
    const exited = new Promise<number | null>((resolve) => effectd.child.once('exit', (code) => resolve(code)));
    process.kill(effectd.pid, 'SIGTERM');
    const answers = await Promise.all(inFlight);
    expect(answers.map((a) => [a.status, a.body.status])).toEqual(Array(6).fill([200, 'done']));
    expect(await exited).toBe(0);
    expect(workers.filter(alive)).toEqual([]);
    expect(log).toMatch(/all 2 workers drained/);
    await simulatorCall(payments.url, '/_admin/faults', { rules: [] });
  }, 40_000);

  it('refuses --workers on the embedded SQLite ledger, with the reason', async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, ['bin/effectd.js', 'start', '--workers', '2', '--port', '0', '--data-dir', tempDir()], { env: process.env }, (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }));
    });
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/--workers 2 needs a PostgreSQL ledger/);
  });
});

describe('--workers and EFFECTD_WORKERS', () => {
  it('takes a whole number or auto (one per core), refuses anything else with what it wants', async () => {
    const { workerCount, refuseLedgerForWorkers } = await import('../../src/cli/workers.js');
    const { loadSettings } = await import('../../src/config/settings-loader.js');
    const workers = (flag: string | undefined, env: Record<string, string> = {}, cores?: () => number) => workerCount(loadSettings(env, { workers: flag }).workers, cores);
    expect(workers(undefined)).toBe(1);
    expect(workers('3')).toBe(3);
    expect(workers(undefined, { EFFECTD_WORKERS: '2' })).toBe(2);
    expect(workers('1', { EFFECTD_WORKERS: '4' })).toBe(1);
    expect(workers('auto', {}, () => 6)).toBe(6);
    for (const bad of ['0', '-1', '1.5', 'two', '999']) expect(() => workers(bad)).toThrow(/--workers must be a whole number from 1 to 256 or "auto" \(one per core\), not "/);
    expect(() => workers(undefined, { EFFECTD_WORKERS: 'many' })).toThrow(/EFFECTD_WORKERS must be a whole number from 1 to 256 or "auto"/);
    expect(() => refuseLedgerForWorkers('postgres://u:p@h/db', 2)).not.toThrow();
    expect(() => refuseLedgerForWorkers(undefined, 2)).toThrow(/needs a PostgreSQL ledger.*SQLite ledger has one writer/);
    expect(() => refuseLedgerForWorkers('kurrentdb://u:secret@h:2113', 2)).toThrow(/"kurrentdb:\/\/h:2113" is not supported with workers/);
  });

  it('the throughput bench takes a --workers dimension', async () => {
    const { parseBenchOptions } = await import('../../packages/bench/src/throughput/options.js');
    expect(parseBenchOptions(['--workers', '1,2'])?.workers).toEqual([{ count: 1, sched: 'rr' }, { count: 2, sched: 'rr' }]);
    expect(parseBenchOptions(['--workers', '1,2', '--sched', 'rr,none'])?.workers).toEqual([{ count: 1, sched: 'rr' }, { count: 2, sched: 'rr' }, { count: 2, sched: 'none' }]);
    expect(parseBenchOptions([])?.workers).toEqual([{ count: 1, sched: 'rr' }]);
    expect(() => parseBenchOptions(['--workers', '0'])).toThrow(/--workers wants positive integers/);
    expect(() => parseBenchOptions(['--sched', 'fifo'])).toThrow(/--sched knows rr and none/);
  });
});
