import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/effectd-harness.js';

function cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['bin/effectd.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

describe('effectd demo --mcp', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  it('the scripted agent calls over MCP: the lost reply is settled inside the first call (done, not isError), the re-issue under a new JSON-RPC id is absorbed, one charge at the provider', async () => {
    const run = await cli(['demo', '--mcp']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/tools\/call JSON-RPC id 1, _meta \{"dev.effectd\/workflowId":"demo-mcp-\d+","dev.effectd\/step":1\}\n {2}effectd → isError false: done: [^\n]*settled with the provider inside this call/);
    expect(run.stdout).toMatch(/tools\/call JSON-RPC id [2-9]\d*, _meta .*\n {2}effectd → isError false: done: /);
    expect(run.stdout).toContain('(answered from the ledger; the provider was not called)');
    expect(run.stdout).toMatch(/Provider ground truth[^\n]*\n {2}charge ch_\w+: 4900 usd for INV-2291/);
    expect(run.stdout).toMatch(/OK: 1 charge\(s\) at the provider for 3 payments_charge calls under 3 different JSON-RPC ids with one _meta identity/);
  }, 60_000);

  it('the default demo is unchanged (HTTP /v1)', async () => {
    const run = await cli(['demo']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('effectd demo — a lost reply, handled without a second charge');
    expect(run.stdout).not.toContain('MCP');
    expect(run.stdout).toMatch(/OK: 1 charge\(s\) at the provider for 3 submissions/);
  }, 60_000);
});
