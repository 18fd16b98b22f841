import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, spawnEffectd, tempDir, type EffectdProcess } from '../support/effectd-harness.js';

const run = promisify(execFile);

/**
 * The official conformance suite's generic server scenarios against /mcp of `effectd start
 * --mcp-anonymous-agent` (its client sends no credentials; the option only binds to loopback).
 * Scenarios that need the suite's own test tools, resources, prompts, logging or completions do
 * not apply to effectd (docs/mcp.md).
 */
describe('MCP conformance suite against /mcp', () => {
  let effectd: EffectdProcess;

  beforeAll(async () => {
    await ensureBuilt();
    effectd = await spawnEffectd(['--data-dir', tempDir(), '--mcp-anonymous-agent']);
  }, 60_000);
  afterAll(async () => {
    await effectd?.kill('SIGTERM');
  });

  it('passes initialize, ping, tools-list and dns-rebinding-protection', async () => {
    const { stdout } = await run('bash', ['scripts/mcp-conformance.sh', `${effectd.url}/mcp`], { timeout: 240_000 }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`conformance failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    console.log(stdout);
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) expect(stdout).toMatch(new RegExp(`scenario ${scenario}: passed`));
  }, 300_000);

  it('refuses --mcp-anonymous-agent on an address that is not loopback', async () => {
    await expect(spawnEffectd(['--data-dir', tempDir(), '--host', '0.0.0.0', '--mcp-anonymous-agent'])).rejects.toThrow(/only binds to loopback/);
  }, 30_000);
});
