// effectd as a team uses it: packed with npm, installed from the tarball into a fresh project that
// brings its own provider, tools, saga and compensation in its own files, started with
// `npx effectd start --config ./effectd.config.mjs`, and driven through a failure into the
// compensation. The agent SDK is installed alone into another fresh project, type-checked and
// used against that effectd, and its installed tree holds none of the server's dependencies.
// Nothing here writes into the repository (packing writes its tarballs to a temp dir).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tempDir, waitFor } from '../support/effectd-harness.js';

const REPO = resolve('.');
const TSC = join(REPO, 'node_modules/.bin/tsc');
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/** The test's provider: a warehouse with documented semantics, keeping its own records (the ground truth). */
interface Reservation { id: string; key: string; order: string; sku: string; quantity: number; reference?: string; status: 'reserved' | 'released' }
class Warehouse {
  readonly reservations: Reservation[] = [];
  /** Every release request, and every shipment request (refused or not). */
  readonly releases: { id: string; key: string; changed: boolean }[] = [];
  readonly shipments: { order: string; key: string; accepted: boolean }[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((done) => (this.server ? this.server.close(() => done()) : done()));
  }

  /**
   * POST /reservations (Idempotency-Key required; a repeated key answers the first reservation with
   * Idempotent-Replayed: true), GET /reservations?reference=, POST /reservations/:id/release
   * (releasing twice is answered as already released), POST /shipments (422 for an undeliverable
   * address: refused, nothing shipped).
   */
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const key = req.headers['idempotency-key'];
    const body = req.method === 'POST' ? await readBody(req) : {};
    const answer = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    if (req.method === 'GET' && url.pathname === '/reservations') {
      return answer(200, { reservations: this.reservations.filter((r) => r.reference === url.searchParams.get('reference')) });
    }
    if (req.method !== 'POST') return answer(405, { error: 'method_not_allowed' });
    if (typeof key !== 'string' || key === '') return answer(400, { error: 'Idempotency-Key header required' });
    if (url.pathname === '/reservations') {
      const seen = this.reservations.find((r) => r.key === key);
      if (seen) return answer(200, seen, { 'idempotent-replayed': 'true' });
      const reservation: Reservation = { id: `res_${this.reservations.length + 1}`, key, order: String(body.order), sku: String(body.sku), quantity: Number(body.quantity), reference: body.reference as string | undefined, status: 'reserved' };
      this.reservations.push(reservation);
      return answer(201, reservation);
    }
    const release = /^\/reservations\/([^/]+)\/release$/.exec(url.pathname);
    if (release) {
      const reservation = this.reservations.find((r) => r.id === release[1]);
      if (!reservation) return answer(404, { error: 'no such reservation' });
      this.releases.push({ id: reservation.id, key, changed: reservation.status === 'reserved' });
      reservation.status = 'released';
      return answer(200, { id: reservation.id, status: reservation.status });
    }
    if (url.pathname === '/shipments') {
      const accepted = !/nowhere/i.test(String(body.address));
      this.shipments.push({ order: String(body.order), key, accepted });
      return accepted ? answer(201, { id: `shp_${this.shipments.length}` }) : answer(422, { error: 'address_not_deliverable' });
    }
    return answer(404, { error: 'not found' });
  }
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) as Record<string, unknown> : {};
}

/** Runs a command to completion (async, so two installs can share the wall clock); fails with its output. */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 240_000): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) done(output);
      else fail(new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${code}:\n${output}`));
    });
  });
}

/** `npm pack` into a temp dir; returns the tarball's path and its file list. */
async function pack(destination: string, args: string[]): Promise<{ file: string; files: string[] }> {
  const out = await run('npm', ['pack', '--json', '--pack-destination', destination, ...args], REPO);
  const [report] = JSON.parse(out.slice(out.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  return { file: join(destination, report!.filename), files: report!.files.map((f) => f.path) };
}

/**
 * A cache for the one slow part: better-sqlite3 compiles from source when its prebuilt binary can't
 * be downloaded. prebuild-install takes a "local prebuild" (npm_config_better_sqlite3_local_prebuilds)
 * named as its download would be; we make it from the repository's own build of the same version.
 */
function betterSqlitePrebuild(dir: string): Record<string, string> {
  if (process.env.EFFECTD_E2E_COMPILE === '1') return {};
  const installed = join(REPO, 'node_modules/better-sqlite3');
  const version = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string }).version;
  if (!existsSync(join(installed, 'build/Release/better_sqlite3.node'))) return {};
  mkdirSync(dir, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(dir, name), '-C', installed, 'build/Release/better_sqlite3.node']);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/** Every package name under a node_modules tree (scoped and nested ones included). */
function installedPackages(nodeModules: string): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      if (entry.name.startsWith('@')) {
        for (const scoped of readdirSync(join(dir, entry.name))) {
          names.add(`${entry.name}/${scoped}`);
          walk(join(dir, entry.name, scoped, 'node_modules'));
        }
        continue;
      }
      names.add(entry.name);
      walk(join(dir, entry.name, 'node_modules'));
    }
  };
  walk(nodeModules);
  return names;
}

// The project's own files: nothing of effectd's sagas/, compensations/ or config/ is used.
const PROJECT_FILES: Record<string, string> = {
  'tools/warehouse.mjs': `import { defineTool } from 'effectd';

export const reserve = defineTool({
  name: 'warehouse.reserve', provider: 'warehouse',
  request: { method: 'POST', path: '/reservations', body: { order: '{args.orderId}', sku: '{args.sku}', quantity: '{args.quantity}', reference: '{ref}' } },
  args: { orderId: { type: 'string', minLength: 1 }, sku: { type: 'string', minLength: 1 }, quantity: { type: 'integer', min: 1 } },
  target: 'order {args.orderId}', reversibility: 'compensable',
  idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 86400000 },
  reference: { kind: 'body-path', path: 'reference' },
  lookup: { by: 'reference', path: '/reservations?reference={ref}', resultsPath: 'reservations', receiptPath: 'id', consistent: true },
  receiptPath: 'id', replayHeader: 'Idempotent-Replayed', timeoutMs: 3000, settleWindowMs: 2000,
});

export const release = defineTool({
  name: 'warehouse.release', provider: 'warehouse',
  request: { method: 'POST', path: '/reservations/{args.reservationId}/release' },
  args: { reservationId: { type: 'string', minLength: 1 } },
  target: 'reservation {args.reservationId}', reversibility: 'idempotent',
  idempotency: { kind: 'header', retentionMs: 86400000 }, receiptPath: 'id', timeoutMs: 3000,
});

export const ship = defineTool({
  name: 'warehouse.ship', provider: 'warehouse',
  request: { method: 'POST', path: '/shipments', body: { order: '{args.orderId}', address: '{args.address}' } },
  args: { orderId: { type: 'string', minLength: 1 }, address: { type: 'text' } },
  target: 'shipment of order {args.orderId}', reversibility: 'irreversible',
  idempotency: { kind: 'header', retentionMs: 86400000 }, receiptPath: 'id', timeoutMs: 3000,
});
`,
  'compensations/release-reservation.mjs': `import { defineCompensation } from 'effectd';

export const releaseReservation = defineCompensation({
  name: 'release-reservation', tool: 'warehouse.release', reversibility: 'idempotent',
  args: (reservationId) => ({ reservationId }),
});
`,
  'sagas/fulfil-order.mjs': `import { defineSaga, z } from 'effectd';
import { releaseReservation } from '../compensations/release-reservation.mjs';

export const fulfilOrder = defineSaga({
  name: 'fulfil-order', version: 1, description: 'Reserve stock, then ship the order.',
  input: z.object({ orderId: z.string().min(1), sku: z.string().min(1), quantity: z.number().int().min(1), address: z.string().min(1) }),
  steps: [
    { name: 'reserve', tool: 'warehouse.reserve', reversibility: 'compensable', compensation: releaseReservation, args: (o) => ({ orderId: o.orderId, sku: o.sku, quantity: o.quantity }) },
    { name: 'ship', tool: 'warehouse.ship', reversibility: 'irreversible', args: (o) => ({ orderId: o.orderId, address: o.address }) },
  ],
});
`,
  // The base URL is a placeholder: the test's port comes from EFFECTD_PROVIDER_WAREHOUSE_URL.
  'effectd.config.mjs': `import { defineConfig } from 'effectd';
import { release, reserve, ship } from './tools/warehouse.mjs';
import { fulfilOrder } from './sagas/fulfil-order.mjs';

export default defineConfig({
  providers: { warehouse: { baseUrl: 'http://127.0.0.1:9' } },
  tools: [reserve, release, ship],
  sagas: [fulfilOrder],
});
`,
  // The same kind of config in TypeScript, type-checked against the installed package's declarations.
  'typed-config.ts': `import { defineConfig, defineSaga, defineTool, z, type ToolContract } from 'effectd';

const tool: ToolContract = defineTool({
  name: 'crm.create-ticket', provider: 'crm', request: { path: '/tickets' }, args: { title: { type: 'text' } },
  target: '{args.title}', reversibility: 'idempotent', idempotency: { kind: 'header', retentionMs: 86400000 },
});
const saga = defineSaga({
  name: 'open-ticket', version: 1, description: '', input: z.object({ title: z.string() }),
  steps: [{ name: 'open', tool: 'crm.create-ticket', reversibility: 'idempotent', args: (i) => ({ title: i.title.trim() }) }],
});
export default defineConfig({ providers: { crm: { baseUrl: 'http://127.0.0.1:4300' } }, tools: [tool], sagas: [saga] });

// @ts-expect-error reversibility is one of read | idempotent | compensable | irreversible
defineTool({ ...tool, reversibility: 'maybe' });
// @ts-expect-error a misspelled field is refused
defineConfig({ tolls: [] });
`,
};

const AGENT_FILES: Record<string, string> = {
  'agent.ts': `import { HttpEffectClient, type EffectResult } from '@effectd/sdk';

export async function reserve(url: string, token: string): Promise<EffectResult> {
  const client = new HttpEffectClient({ url, token, timeoutMs: 10_000 });
  const outcome = await client.submit({ workflowId: 'agent-order-7', step: 1, tool: 'warehouse.reserve', args: { orderId: 'ORD-7', sku: 'SKU-1', quantity: 2 } });
  // @ts-expect-error three states and a refusal, never two: there is no "failed"
  if (outcome.status === 'failed') throw new Error('unreachable');
  return outcome;
}
`,
  'run.mjs': `import { HttpEffectClient } from '@effectd/sdk';
const [url, token] = process.argv.slice(2);
const client = new HttpEffectClient({ url, token, timeoutMs: 10_000 });
const outcome = await client.submit({ workflowId: 'agent-order-7', step: 1, tool: 'warehouse.reserve', args: { orderId: 'ORD-7', sku: 'SKU-1', quantity: 2 } });
console.log(JSON.stringify(outcome));
`,
};

const tsconfig = (skipLibCheck: boolean) => JSON.stringify({
  compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2023', noEmit: true, skipLibCheck, types: ['node'], typeRoots: [join(REPO, 'node_modules/@types')] },
  include: ['*.ts'],
});

describe('effectd installed from its tarball into a fresh project', () => {
  const work = tempDir('effectd-package-e2e-');
  const shop = join(work, 'shop');
  const agent = join(work, 'agent');
  const warehouse = new Warehouse();
  let tarball: { file: string; files: string[] };
  let sdkTarball: { file: string; files: string[] };
  let simulatorsTarball: { file: string; files: string[] };
  let effectd: ChildProcess | undefined;
  let effectdOutput = '';
  /** effectd's log as sentences: its JSON lines' `msg` (or the line itself when it is not JSON). */
  const logText = () => effectdOutput.split('\n').map((line) => {
    try {
      return (JSON.parse(line) as { msg?: string }).msg ?? line;
    } catch {
      return line;
    }
  }).join('\n');
  let url = '';
  let token = '';

  beforeAll(async () => {
    // EFFECTD_SKIP_BUILD=1: dist/ is already fresh (as for every int test), so pack without prepack's build.
    const skipBuild = process.env.EFFECTD_SKIP_BUILD === '1';
    if (skipBuild) await ensureBuilt();
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    tarball = await pack(tarballs, skipBuild ? ['--ignore-scripts'] : []);
    sdkTarball = await pack(tarballs, ['--workspace', '@effectd/sdk']);
    // Published with the service (a dependency `effectd dev` runs): installed beside it, as the registry would.
    simulatorsTarball = await pack(tarballs, ['--workspace', '@effectd/simulators', ...(skipBuild ? ['--ignore-scripts'] : [])]);
    for (const [dir, files] of [[shop, PROJECT_FILES], [agent, AGENT_FILES]] as const) {
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(join(dir, file, '..'), { recursive: true });
        writeFileSync(join(dir, file), text);
      }
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: dir === shop ? 'a-shop' : 'an-agent', private: true, type: 'module' }));
    }
    await Promise.all([
      run('npm', ['install', tarball.file, simulatorsTarball.file, ...INSTALL_FLAGS], shop, betterSqlitePrebuild(join(work, 'prebuilds'))),
      run('npm', ['install', sdkTarball.file, ...INSTALL_FLAGS], agent),
    ]);
    await warehouse.start();
  }, 300_000);

  afterAll(async () => {
    if (effectd?.pid !== undefined && effectd.exitCode === null) {
      const exited = new Promise((done) => effectd!.once('exit', done));
      process.kill(-effectd.pid, 'SIGTERM');
      await exited;
    }
    await warehouse.close();
    // Two installed projects are ~170 MB: keep them only when asked (EFFECTD_KEEP_E2E=1, to look around).
    if (process.env.EFFECTD_KEEP_E2E !== '1') rmSync(work, { recursive: true, force: true });
  });

  it('ships what runs and nothing else: dist, the CLI, config and its schema, the console; no tests, sources or source maps', () => {
    expect(tarball.files).toEqual(expect.arrayContaining(['bin/effectd.js', 'dist/src/cli/main.js', 'dist/src/config/index.js', 'dist/src/config/index.d.ts', 'dist/src/sdk/index.d.ts', 'config/builtin-tools.json', 'config/effectd.config.schema.json', 'console/index.html', 'LICENSE', 'proto/effectd/v1/effectd.proto']));
    expect(tarball.files.filter((f) => /^(test|dist\/test|src|bench|dist\/bench|examples|packages)\//.test(f) || f.endsWith('.map') || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual([]);
    // The benchmark, its harness and the simulators are workspaces of their own (issue 26, item 5).
    expect(tarball.files.filter((f) => /(^|\/)(bench|harness|simulators)\//.test(f))).toEqual([]);
    expect(simulatorsTarball.files).toEqual(expect.arrayContaining(['package.json', 'dist/main.js', 'dist/index.js', 'dist/index.d.ts', 'dist/LICENSE']));
    expect(simulatorsTarball.files.filter((f) => f.startsWith('src/') || f.endsWith('.map'))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(shop, 'node_modules/effectd/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).not.toContain('typescript');
    // A project on SQLite without trace export installs none of the drivers other setups use (optional peers, issue 26 item 6).
    const installed = installedPackages(join(shop, 'node_modules'));
    for (const name of ['@kurrent/kurrentdb-client', 'pg', '@opentelemetry/exporter-trace-otlp-http', 'protobufjs', '@effectd/bench', '@dbos-inc/dbos-sdk']) expect(installed.has(name), name).toBe(false);
    expect(installed.has('@effectd/simulators')).toBe(true);
    expect(sdkTarball.files.sort()).toEqual(expect.arrayContaining(['package.json', 'dist/src/sdk/index.js', 'dist/src/sdk/index.d.ts', 'dist/LICENSE']));
  });

  it('runs effectd dev from the installed tarball (the simulators from @effectd/simulators), and says how to get the benchmark', async () => {
    const dev = spawn('npx', ['--no-install', 'effectd', 'dev', '--port', '0', '--data-dir', './.effectd-dev'], { cwd: shop, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    dev.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    dev.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const payments = await waitFor('effectd dev\'s banner', async () => /^\s+payments\s+(http:\/\/\S+)/m.exec(out)?.[1], 60_000);
      const api = /HTTP API\s+(http:\/\/\S+)/.exec(out)![1]!;
      expect(out).toMatch(/travel\s+http:\/\/127\.0\.0\.1:\d+/);
      expect((await fetch(`${payments}/_admin/health`)).status).toBe(200);
      expect((await fetch(`${api}/healthz`)).status).toBe(200);
    } finally {
      const exited = new Promise((done) => dev.once('exit', done));
      process.kill(-dev.pid!, 'SIGTERM');
      await exited;
    }
    const bench = await run('npx', ['--no-install', 'effectd', 'bench', '--quick'], shop).then(() => undefined, (error: Error) => error.message);
    expect(bench).toMatch(/not part of this installation[\s\S]*packages\/bench[\s\S]*npm install[\s\S]*npm run bench/);
  }, 120_000);

  it('checks the project\'s config and starts effectd with its own tools and saga, the provider URL from the environment', async () => {
    const version = await run('npx', ['--no-install', 'effectd', '--version'], shop);
    expect(version.trim()).toBe(`effectd ${JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version}`);
    const check = await run('npx', ['--no-install', 'effectd', 'config', 'check', './effectd.config.mjs'], shop);
    expect(check).toMatch(/fulfil-order v1[\s\S]*1\. reserve: warehouse\.reserve, compensable; undo: release-reservation \(warehouse\.release\)[\s\S]*2\. ship: warehouse\.ship, irreversible/);

    effectd = spawn('npx', ['--no-install', 'effectd', 'start', '--config', './effectd.config.mjs', '--port', '0', '--data-dir', './.effectd'], {
      // Its own process group: npx does not pass SIGTERM on to effectd, so the group is signalled.
      cwd: shop, env: { ...process.env, EFFECTD_PROVIDER_WAREHOUSE_URL: warehouse.url, EFFECTD_DATA_DIR: '', EFFECTD_CONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    effectd.stdout!.on('data', (d) => (effectdOutput += d));
    effectd.stderr!.on('data', (d) => (effectdOutput += d));
    url = await waitFor('effectd listening', async () => /effectd listening on (http:\/\/\S+)/.exec(logText())?.[1], 60_000);
    await waitFor('the start-up lines', async () => (/\ntools: .*\n/.test(logText()) ? true : undefined), 10_000);
    expect(logText()).toContain(`provider warehouse: base URL ${warehouse.url} (from EFFECTD_PROVIDER_WAREHOUSE_URL)`);
    expect(logText()).toMatch(/\ntools: warehouse\.reserve, warehouse\.release, warehouse\.ship\n/);
    const { credentials } = JSON.parse(readFileSync(join(shop, '.effectd/credentials.json'), 'utf8')) as { credentials: { token: string; role: string }[] };
    token = credentials.find((c) => c.role === 'agent')!.token;

    const sagas = await (await fetch(`${url}/v1/sagas`, { headers: { authorization: `Bearer ${token}` } })).json() as unknown;
    expect(JSON.stringify(sagas)).toContain('fulfil-order');
    expect(JSON.stringify(sagas)).not.toContain('trip-booking');
  }, 120_000);

  it('runs the saga through a refused shipment into the release of the reservation, once', async () => {
    const started = await fetch(`${url}/v1/sagas`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ saga: 'fulfil-order', workflowId: 'order-1', input: { orderId: 'ORD-1', sku: 'SKU-9', quantity: 3, address: '1 Nowhere Lane' } }),
    });
    expect(started.status).toBeLessThan(300);
    const view = await waitFor('the saga to finish', async () => {
      const answer = await (await fetch(`${url}/v1/sagas/order-1`, { headers: { authorization: `Bearer ${token}` } })).json() as { status: string; steps: unknown[] };
      return ['compensated', 'compensation_failed', 'completed'].includes(answer.status) ? answer : undefined;
    }, 30_000);
    expect(view.status).toBe('compensated');

    // The provider's own records: reserved once, the shipment refused once, released once.
    expect(warehouse.reservations).toHaveLength(1);
    expect(warehouse.reservations[0]).toMatchObject({ order: 'ORD-1', sku: 'SKU-9', quantity: 3, status: 'released' });
    expect(warehouse.shipments).toEqual([expect.objectContaining({ order: 'ORD-1', accepted: false })]);
    expect(warehouse.releases).toEqual([expect.objectContaining({ id: warehouse.reservations[0]!.id, changed: true })]);
    expect(JSON.stringify(view)).toContain(warehouse.reservations[0]!.id);
  }, 60_000);

  it('type-checks a TypeScript config against the installed declarations (and refuses a wrong one)', async () => {
    writeFileSync(join(shop, 'tsconfig.json'), tsconfig(true));
    await run(TSC, ['-p', shop], shop);
  }, 60_000);

  it('installs the SDK alone: none of the server\'s dependencies, declarations complete, usable against that effectd', async () => {
    const serverDependencies = Object.keys((JSON.parse(readFileSync(join(shop, 'node_modules/effectd/package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    const sdkDependencies = Object.keys((JSON.parse(readFileSync(join(agent, 'node_modules/@effectd/sdk/package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    const installed = installedPackages(join(agent, 'node_modules'));
    expect([...installed].sort()).toEqual(['@bufbuild/protobuf', '@effectd/sdk', 'kafkajs']);
    expect(serverDependencies.filter((name) => installed.has(name) && !sdkDependencies.includes(name))).toEqual([]);
    for (const name of ['@nestjs/core', 'pg', 'better-sqlite3', 'typescript', 'zod', 'prom-client', 'pino', '@kurrent/kurrentdb-client', '@modelcontextprotocol/server', '@opentelemetry/sdk-trace']) expect(installed.has(name)).toBe(false);

    // skipLibCheck off: the SDK's own .d.ts files must resolve with only its dependencies.
    writeFileSync(join(agent, 'tsconfig.json'), tsconfig(false));
    await run(TSC, ['-p', agent], agent);

    const outcome = JSON.parse(await run(process.execPath, ['run.mjs', url, token], agent)) as { status: string; receipt?: string; tool: string };
    expect(outcome).toMatchObject({ status: 'done', tool: 'warehouse.reserve' });
    expect(warehouse.reservations.map((r) => r.id)).toContain(outcome.receipt);
    const again = JSON.parse(await run(process.execPath, ['run.mjs', url, token], agent)) as { status: string; receipt?: string; replayed: boolean };
    expect(again).toMatchObject({ status: 'done', receipt: outcome.receipt, replayed: true });
    expect(warehouse.reservations.filter((r) => r.order === 'ORD-7')).toHaveLength(1);
  }, 60_000);
});
