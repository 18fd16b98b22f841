import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { authHeaders, ensureBuilt, getJson, postJson, spawnEffectd, startPayments, tempDir, writeToolsConfig, type EffectdProcess } from '../support/effectd-harness.js';

const run = promisify(execFile);

/** The operator CLI against a real `effectd start` process over HTTP: a workflow's timeline, and effect lists a page at a time. */
describe('effectd workflow and effectd effects --limit/--cursor', () => {
  let payments: RunningSimulator;
  let effectd: EffectdProcess;
  let dataDir: string;
  const tag = Date.now().toString(36);
  const workflowId = `wf-cli-${tag}`;
  const submitted: string[] = [];

  const cli = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, ['bin/effectd.js', ...args, '--url', effectd.url, '--data-dir', dataDir], { encoding: 'utf8' });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };

  beforeAll(async () => {
    await ensureBuilt();
    payments = await startPayments();
    dataDir = tempDir('effectd-cli-');
    effectd = await spawnEffectd(['--data-dir', dataDir, '--config', writeToolsConfig(dataDir, { payments: payments.url })]);
    // Seven charges of one workflow, one step each (different invoices: no content hold).
    for (let step = 1; step <= 7; step++) {
      const answer = await postJson(`${effectd.url}/v1/effects`, { workflowId, step, tool: 'payments.charge', args: { invoiceId: `INV-CLI-${tag}-${step}`, amount: '12.00 USD' } }, authHeaders(dataDir, 'agent'));
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('done');
      submitted.push(answer.body.effectId as string);
    }
  }, 60_000);

  afterAll(async () => {
    await effectd?.kill('SIGTERM');
    await payments?.close();
  });

  it('pages through more effects than the limit: each page says it was cut short and how to get the next, and together they list each effect once', async () => {
    const seen: string[] = [];
    let args = ['effects', '--state', 'committed', '--limit', '3'];
    const pages: string[] = [];
    for (let i = 0; i < 10; i++) {
      const page = await cli(...args);
      expect(page.code, page.stderr).toBe(0);
      pages.push(page.stdout);
      seen.push(...[...page.stdout.matchAll(/^(eff_[0-9a-f]+)\s+committed\s+payments\.charge/gm)].map((m) => m[1]!));
      const next = /^showing (\d+) of more; next: effectd (effects .*--cursor \S+)$/m.exec(page.stdout);
      if (!next) break;
      expect(Number(next[1])).toBe(3);
      // The printed command is the one to run: the same filters, the cursor.
      expect(next[2]).toMatch(/^effects --state committed --limit 3 --cursor c2\./);
      args = next[2]!.split(' ');
    }
    expect(pages).toHaveLength(3); // 3 + 3 + 1
    expect(pages[2]).not.toMatch(/showing \d+ of more/);
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(submitted));
    // Most recently active first: the last step submitted comes first.
    expect(seen).toEqual([...submitted].reverse());
  });

  it('the HTTP list pages the same way: nextCursor until the last page, and a cursor it never gave out is a 400 naming the field', async () => {
    const operator = authHeaders(dataDir, 'operator');
    const first = await getJson(`${effectd.url}/v1/effects?state=committed&limit=5`, operator);
    expect(first.status).toBe(200);
    expect(first.body.effects).toHaveLength(5);
    expect(first.body.nextCursor).toMatch(/^c2\./);
    const second = await getJson(`${effectd.url}/v1/effects?state=committed&limit=5&cursor=${encodeURIComponent(first.body.nextCursor)}`, operator);
    expect(second.body.effects).toHaveLength(2);
    expect(second.body).not.toHaveProperty('nextCursor');
    const bad = await getJson(`${effectd.url}/v1/effects?cursor=page-2`, operator);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/cursor/);
    expect(JSON.stringify(bad.body)).toMatch(/not a cursor of this list/);
    const cliBad = await cli('effects', '--cursor', 'page-2');
    expect(cliBad.code).toBe(1);
    expect(cliBad.stderr).toMatch(/400/);
    const cliLimit = await cli('effects', '--limit', '0');
    expect(cliLimit.code).toBe(1);
    expect(cliLimit.stderr).toMatch(/--limit must be a whole number from 1 to 1000, not "0"/);
  });

  it('effectd workflow <id> prints the effects and one timeline line per ledger event, as GET /v1/workflows/:id has them', async () => {
    const shown = await cli('workflow', workflowId);
    expect(shown.code, shown.stderr).toBe(0);
    const api = (await getJson(`${effectd.url}/v1/workflows/${workflowId}`, authHeaders(dataDir, 'operator'))).body as { timeline: { at: string; summary: string }[] };
    expect(shown.stdout).toMatch(new RegExp(`^workflow ${workflowId} \\(tenant default\\): 7 effect\\(s\\), ${api.timeline.length} event\\(s\\)$`, 'm'));
    for (const effectId of submitted) expect(shown.stdout).toMatch(new RegExp(`^  ${effectId}  committed\\s+payments\\.charge for invoice INV-CLI-${tag}-\\d \\(step \\d, slot 0, 1 attempt\\(s\\)\\)  receipt ch_`, 'm'));
    const timeline = shown.stdout.slice(shown.stdout.indexOf('\ntimeline:\n') + '\ntimeline:\n'.length).trimEnd().split('\n');
    // The API's summaries, provider keys abridged: the whole key is never printed.
    expect(timeline).toEqual(api.timeline.map((e) => `  ${e.at.slice(11, 23)}  ${e.summary.replace(/\bkey (efd-[\w-]{4})[\w-]+/g, 'key $1…')}`));
    const keys = api.timeline.flatMap((e) => [...e.summary.matchAll(/\bkey (efd-[\w-]+)/g)].map((m) => m[1]!));
    expect(keys.length).toBeGreaterThanOrEqual(7);
    for (const key of keys) expect(shown.stdout).not.toContain(key);
    expect(timeline[0]).toMatch(new RegExp(`^  \\d\\d:\\d\\d:\\d\\d\\.\\d{3}  declared payments\\.charge for invoice INV-CLI-${tag}-1 \\(step 1, slot 0\\) by default-agent$`));
    expect(timeline.some((line) => / attempt 1 → committed \(receipt ch_\S+\): HTTP 200/.test(line))).toBe(true);
  });

  it('a workflow that does not exist, or another tenant, is a clear error; the command names one workflow', async () => {
    const missing = await cli('workflow', `wf-nope-${tag}`);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(new RegExp(`404: no workflow wf-nope-${tag} for tenant default`));
    const otherTenant = await cli('workflow', workflowId, '--tenant', 'elsewhere');
    expect(otherTenant.code).toBe(1);
    expect(otherTenant.stderr).toMatch(new RegExp(`no workflow ${workflowId} for tenant elsewhere`));
    const none = await cli('workflow');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/name one workflow: effectd workflow <workflowId>/);
    const unknownFlag = await cli('workflow', workflowId, '--bogus');
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toMatch(/^effectd workflow: unknown option --bogus; the options of effectd workflow are below\n[\s\S]*Usage: effectd workflow <workflowId>/);
  });
});
