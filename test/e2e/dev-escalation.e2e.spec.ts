// The resolve flow as docs/watching.md tells a newcomer to try it: `effectd dev`, the two commands
// its banner prints under "Make one escalate" (a fault rule at the weak simulator, a weak.notify),
// then the console as the operator: the escalated effect on the queue, resolved.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot } from '../support/chromium.js';
import { authHeaders, ensureBuilt, getJson, tempDir, waitFor } from '../support/effectd-harness.js';

const run = promisify(execFile);

describe('effectd dev: make an effect escalate and resolve it in the console', () => {
  const dataDir = tempDir('effectd-dev-escalate-');
  let child: ChildProcess;
  let stdout = '';
  let stderr = '';
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    await ensureBuilt();
    child = spawn(process.execPath, ['bin/effectd.js', 'dev', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, EFFECTD_LOG_FORMAT: 'json' } });
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor('the dev banner', async () => (/^Ctrl-C stops/m.test(stdout) ? true : undefined), 45_000, 100).catch((error: Error) => {
      throw new Error(`${error.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    });
    browser = await launchChromium();
    page = await browser.newPage();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('the banner\'s "Make one escalate" lines escalate a notification, and the operator resolves it in the console', async () => {
    const api = /^ {2}HTTP API +(\S+)/m.exec(stdout)?.[1];
    expect(api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const block = /^ {2}Make one escalate[^\n]*:\n((?: {4}.*\n)+)/m.exec(stdout)?.[1];
    expect(block, `no "Make one escalate" in the banner:\n${stdout}`).toBeDefined();
    expect(block).toContain('/_admin/faults');
    // The lines as printed, in a shell, with the agent's token as the banner's "Try it" gets it.
    const token = authHeaders(dataDir, 'agent').authorization!.replace(/^Bearer /, '');
    const { stdout: answers } = await run('bash', ['-e', '-c', block!], { env: { ...process.env, TOKEN: token } });
    const outcome = JSON.parse(answers.trim().split('\n').pop()!) as { effectId: string; status: string };
    expect(outcome.status).toBe('unknown');

    // Escalated within seconds (weak.notify has no key and no lookup: only a human can tell).
    const operator = authHeaders(dataDir, 'operator');
    await waitFor('the notification to escalate', async () => ((await getJson(`${api}/v1/effects/${outcome.effectId}`, operator)).body.state === 'escalated' ? true : undefined), 30_000, 200);

    await page.goto(`${api}/`);
    await page.getByTestId('token-input').fill(operator.authorization!.replace(/^Bearer /, ''));
    await page.getByTestId('sign-in').click();
    const card = page.locator(`[data-testid="queue-item"][data-effect-id="${outcome.effectId}"]`);
    await card.waitFor();
    await card.click();
    await page.getByTestId('resolve-form').waitFor();
    expect(await page.locator('[data-testid="resolve-form"] input[type=radio]:checked').count()).toBe(0);
    await screenshot(page, 'console-dev-escalation', { docs: true });
    await page.getByTestId('outcome-committed').check();
    await page.getByTestId('receipt').fill('msg-ops-0001');
    await page.getByTestId('reason').fill('Seen in #ops: the simulator delivered it (GET <weak>/_oracle/state)');
    await page.getByTestId('resolve-submit').click();
    await page.locator(`[data-testid="effect-state"][data-effect-id="${outcome.effectId}"][data-state="committed"]`).waitFor();
    expect((await getJson(`${api}/v1/effects/${outcome.effectId}`, operator)).body).toMatchObject({ state: 'committed', receipt: 'msg-ops-0001', resolvedBy: 'default-operator' });

    // The rule fired once: the same lines make another one (a new workflow each time).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const again = JSON.parse((await run('bash', ['-e', '-c', block!], { env: { ...process.env, TOKEN: token } })).stdout.trim().split('\n').pop()!) as { effectId: string; status: string };
    expect(again.effectId).not.toBe(outcome.effectId);
    expect(again.status).toBe('unknown');
  });
});

/** `effectd dev --config` with a config of one email tool: only the email simulator, and "Try it" sends an email. */
describe('effectd dev --config: only the simulators the config uses', () => {
  const dataDir = tempDir('effectd-dev-config-');
  let child: ChildProcess;
  let stdout = '';
  let stderr = '';

  beforeAll(async () => {
    await ensureBuilt();
    const builtin = JSON.parse(readFileSync('config/builtin-tools.json', 'utf8')) as { providers: Record<string, unknown>; tools: { name: string }[] };
    const configFile = join(dataDir, 'effectd.config.json');
    writeFileSync(configFile, JSON.stringify({ builtinTools: false, providers: { email: builtin.providers.email }, tools: [builtin.tools.find((t) => t.name === 'email.send')] }));
    child = spawn(process.execPath, ['bin/effectd.js', 'dev', '--port', '0', '--data-dir', dataDir, '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, EFFECTD_LOG_FORMAT: 'json' } });
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor('the dev banner', async () => (/^Ctrl-C stops/m.test(stdout) ? true : undefined), 45_000, 100).catch((error: Error) => {
      throw new Error(`${error.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    });
  }, 240_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('starts the email simulator alone, offers no escalation it cannot make, and its "Try it" lines send an email', async () => {
    const simulators = [...stdout.matchAll(/^ {4}(\S+) +(http:\/\/\S+) +pid (\d+)/gm)].map((m) => m[1]);
    expect(simulators).toEqual(['email']);
    expect(stdout).not.toContain('Make one escalate');
    const tryIt = /^ {2}Try it:\n((?: {4}.*\n)+)/m.exec(stdout)?.[1] ?? '';
    expect(tryIt).toContain('"tool":"email.send"');
    const script = tryIt.split('\n').filter((l) => !/ effects --state/.test(l)).join('\n');
    const { stdout: answer } = await run('bash', ['-e', '-c', script]);
    expect(JSON.parse(answer)).toMatchObject({ status: 'done', receipt: expect.stringMatching(/^em_/) });
  });
});
