import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, getJson, tempDir, waitFor } from '../support/effectd-harness.js';
import { tryConnect } from '../support/try-connect.js';

const run = promisify(execFile);


function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Banner {
  api: string;
  console: string;
  mcp: string;
  docs: string;
  credentials: string;
  tokenLine: string;
  tryIt: string;
  simulators: { provider: string; url: string; pid: number }[];
}

function parseBanner(text: string): Banner {
  const field = (label: string) => {
    const match = new RegExp(`^  ${label} +(\\S+)`, 'm').exec(text);
    if (!match) throw new Error(`no "${label}" in the banner:\n${text}`);
    return match[1]!;
  };
  const tryIt = /^ {2}Try it:\n((?: {4}.*\n)+)/m.exec(text)?.[1] ?? '';
  return {
    api: field('HTTP API'), console: field('Console'), mcp: field('MCP'), docs: field('API docs'), credentials: field('Credentials'),
    tokenLine: /^ {2}Agent token +(.+)$/m.exec(text)?.[1] ?? '',
    tryIt,
    simulators: [...text.matchAll(/^ {4}(\S+) +(http:\/\/\S+) +pid (\d+)/gm)].map((m) => ({ provider: m[1]!, url: m[2]!, pid: Number(m[3]) })),
  };
}

/** `effectd dev` from the repository, as a newcomer runs it: its banner, its token command, a curl, the console, then Ctrl-C (SIGTERM). */
describe('effectd dev', () => {
  const dataDir = tempDir('effectd-dev-');
  let child: ChildProcess;
  let stdout = '';
  let stderr = '';
  let banner: Banner;
  let exit: Promise<number | null>;

  beforeAll(async () => {
    await ensureBuilt();
    child = spawn(process.execPath, ['bin/effectd.js', 'dev', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, EFFECTD_LOG_FORMAT: 'json' } });
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    await waitFor('the dev banner', async () => (/^Ctrl-C stops/m.test(stdout) ? true : undefined), 45_000, 100).catch((error: Error) => {
      throw new Error(`${error.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    });
    banner = parseBanner(stdout);
  }, 60_000);

  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('prints the API, console, MCP and docs URLs, every simulated provider, the credentials file and the token command', () => {
    expect(banner.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(banner.console).toBe(`${banner.api}/`);
    expect(banner.mcp).toBe(`${banner.api}/mcp`);
    expect(banner.docs).toBe(`${banner.api}/docs`);
    expect(banner.credentials).toBe(join(dataDir, 'credentials.json'));
    expect(banner.tokenLine).toBe(`TOKEN=$(node bin/effectd.js token --data-dir ${dataDir})`);
    expect(banner.simulators.map((s) => s.provider).sort()).toEqual(['cloud', 'email', 'payments', 'payments-v2', 'travel', 'weak']);
    const ports = new Set(banner.simulators.map((s) => new URL(s.url).port));
    expect(ports.size).toBe(6);
    expect(stdout).not.toContain(JSON.parse(readFileSync(banner.credentials, 'utf8')).credentials[0].token);
  });

  it('effectd token prints the agent (or operator) token of the data dir, and says what to do when there is none', async () => {
    const { credentials } = JSON.parse(readFileSync(banner.credentials, 'utf8')) as { credentials: { token: string; role: string }[] };
    const agent = await run(process.execPath, ['bin/effectd.js', 'token', '--data-dir', dataDir]);
    expect(agent.stdout).toBe(`${credentials.find((c) => c.role === 'agent')!.token}\n`);
    const operator = await run(process.execPath, ['bin/effectd.js', 'token', '--role', 'operator', '--data-dir', dataDir]);
    expect(operator.stdout).toBe(`${credentials.find((c) => c.role === 'operator')!.token}\n`);
    const missing = join(tempDir(), 'nothing-here');
    await expect(run(process.execPath, ['bin/effectd.js', 'token', '--data-dir', missing])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(`no credentials file at ${join(missing, 'credentials.json')}: start effectd dev or effectd start first`) });
    await expect(run(process.execPath, ['bin/effectd.js', 'token', '--role', 'admin', '--data-dir', dataDir])).rejects.toMatchObject({ stderr: expect.stringContaining('--role must be agent or operator, not "admin"') });
  });

  it('the banner\'s own lines (token, then curl) charge through the payments simulator: done, with its receipt', async () => {
    expect(banner.tryIt).toContain('curl -s -X POST');
    const script = banner.tryIt.split('\n').filter((l) => !/ effects --state/.test(l)).join('\n');
    const { stdout: answer } = await run('bash', ['-e', '-c', script]);
    const outcome = JSON.parse(answer) as { status: string; state: string; receipt?: string; tool: string };
    expect(outcome).toMatchObject({ status: 'done', state: 'committed', tool: 'payments.charge', receipt: expect.stringMatching(/^ch_/) });
    const payments = banner.simulators.find((s) => s.provider === 'payments')!;
    const truth = (await getJson(`${payments.url}/_oracle/state`)).body as { charges: { id: string; amount: number }[] };
    expect(truth.charges).toEqual([expect.objectContaining({ id: outcome.receipt, amount: 4900 })]);
    // The banner's operator line: the queue of effects needing a human is empty.
    const queueLine = banner.tryIt.split('\n').find((l) => / effects --state attention/.test(l))!;
    const { stdout: queue } = await run('bash', ['-e', '-c', queueLine]);
    expect(queue).toMatch(/no effects in state attention/);
  });

  it('the console and the MCP endpoint answer on the printed URLs', async () => {
    const page = await fetch(banner.console);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const mcp = await fetch(banner.mcp, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(mcp.status).toBe(401);
  });

  it('SIGTERM drains effectd and stops every simulator: exit 0, their ports refuse, their processes are gone', async () => {
    for (const s of banner.simulators) expect(await tryConnect(s.url)).toBe('connected');
    child.kill('SIGTERM');
    expect(await exit, stderr).toBe(0);
    for (const s of banner.simulators) {
      expect(await tryConnect(s.url), s.provider).toBe('refused');
      expect(processAlive(s.pid), `${s.provider} pid ${s.pid}`).toBe(false);
    }
    expect(await tryConnect(banner.api)).toBe('refused');
    expect(stdout).toMatch(/"event":"Drained".*drained in \d+ ms; exiting/);
  }, 40_000);
});
