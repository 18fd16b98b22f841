import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import { loadSettings } from '../../src/config/settings-loader.js';
import type { DispatchResult } from '../../src/core/dispatch-result.js';
import { createRuntime, type EffectdRuntime } from '../../src/runtime/effectd-runtime.js';

/**
 * Issue 27, rule 4: answers say only what is true. With the data directory full, a 503 said
 * "nothing was recorded, send the same command again" for a command whose attempt had been claimed
 * and delivered. Here the data directory is a small tmpfs (this needs root to mount one; the test
 * is skipped where mounting is refused) that fills up while the provider is being called: the
 * attempt is in the ledger and at the provider, its outcome cannot be written.
 */
const mountPoint = mkdtempSync(join(tmpdir(), 'effectd-full-'));
const canMount = (() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Fills the filesystem: what is left of it goes to one file (removed by `free`). */
const filler = join(mountPoint, 'filler');
function fill(): void {
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}
function free(): void {
  rmSync(filler, { force: true });
}

async function postJson(url: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}
async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers });
  return { status: res.status, body: await res.json() };
}

describe.skipIf(!canMount)('the disk-full answer (a ledger that stops accepting writes)', () => {
  let runtime: EffectdRuntime;
  let server: HttpServer;
  let url: string;
  let agent: Record<string, string>;
  let fillDuringDispatch = false;
  /** What reached the provider: each dispatch is one request there (a charge that happened). */
  let sent = 0;
  const providerRequests = async () => sent;
  const charge = (workflowId: string) => ({ workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: `INV-${workflowId}`, amount: 4900 } });

  beforeAll(async () => {
    const dataDir = join(mountPoint, 'data');
    mkdirSync(dataDir);
    runtime = await createRuntime({
      dataDir, settings: loadSettings({}), reconcileTickMs: 50,
      // The disk fills while the provider is called: after the claim was recorded, before the outcome is.
      dispatcher: async (): Promise<DispatchResult> => {
        if (fillDuringDispatch) fill();
        sent++;
        return { kind: 'response', status: 200, headers: { 'content-type': 'application/json' }, body: { id: `ch_${sent}`, object: 'charge', status: 'succeeded' }, latencyMs: 1 };
      },
    });
    server = await startHttpServer(runtime, 0);
    url = server.url;
    const { credentials } = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { credentials: { token: string; role: string }[] };
    agent = { authorization: `Bearer ${credentials.find((c) => c.role === 'agent')!.token}` };
    // One effect first, so the ledger file and its WAL exist before the disk fills.
    expect((await postJson(`${url}/v1/effects`, charge('wf-warm'), agent)).status).toBe(200);
  });
  afterEach(() => {
    fillDuringDispatch = false;
    free();
  });
  afterAll(async () => {
    await server?.close();
    await runtime?.close();
    execFileSync('umount', ['-l', mountPoint]);
  });

  it('after the attempt was claimed and sent: the 503 does not say "nothing was recorded"; it says the attempt was recorded, with the effect id', async () => {
    const before = await providerRequests();
    fillDuringDispatch = true;
    const answer = await postJson(`${url}/v1/effects`, charge('wf-full-after-claim'), agent);
    expect(await providerRequests()).toBe(before + 1);
    expect(answer.status).toBe(503);
    expect(answer.body.message).not.toMatch(/nothing was recorded/i);
    expect(answer.body.message).toMatch(/recorded as started/);
    expect(answer.body.message).toMatch(/do not assume it failed/);
    expect(answer.body.effectId).toMatch(/^eff_/);
    expect(answer.body.message).toContain(`GET /v1/effects/${answer.body.effectId}`);
    expect(answer.body.recorded).toMatchObject({ status: 'unknown' });
    // The failed append is known: not ready, and /healthz no longer says ok.
    const ready = await getJson(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.ledgerWrites).toMatchObject({ writable: false });
    expect(ready.body.ledgerWrites.error).toMatch(/full/i);
    expect((await getJson(`${url}/healthz`)).body).toMatchObject({ status: 'degraded', ledgerWrites: { writable: false } });
    // What it says is what the ledger holds: the claimed attempt, no outcome.
    free();
    const effect = await getJson(`${url}/v1/effects/${answer.body.effectId}`, agent);
    expect(effect.status).toBe(200);
    expect(effect.body.evidence.map((e: { type: string }) => e.type)).toEqual(['EffectDeclared', 'AttemptStarted']);
  });

  it('before anything was recorded: the 503 says nothing was recorded, and the same command again is carried out once', async () => {
    const before = await providerRequests();
    fill();
    const answer = await postJson(`${url}/v1/effects`, charge('wf-full-before'), agent);
    expect(answer.status).toBe(503);
    expect(answer.body.message).toMatch(/nothing was recorded[;,] send the same command again/);
    expect(answer.body.recorded).toBeUndefined();
    expect(await providerRequests()).toBe(before);
    free();
    // Ready again once a write (the probe, at most once a second) is accepted.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await getJson(`${url}/readyz`)).status).toBe(200);
    const again = await postJson(`${url}/v1/effects`, charge('wf-full-before'), agent);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('done');
    expect(await providerRequests()).toBe(before + 1);
  });
});
