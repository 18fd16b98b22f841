import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConformanceFixtureServer, type ConformanceFixtureServer } from '../support/conformance-fixture-server.js';
import { ensureBuilt, spawnEffectd, tempDir, type EffectdProcess } from '../support/effectd-harness.js';

const run = promisify(execFile);

/**
 * The official conformance suite at the 2026-07-28 revision against /mcp (scripts/mcp-conformance.sh):
 * effectd carries the suite's fixture tools from an upstream MCP server (test/fixtures/
 * mcp-conformance.config.json), and every scenario passes or is an expected failure with its reason
 * (conformance/mcp-expected-failures.yaml). The suite's client sends no credentials
 * (--mcp-anonymous-agent, loopback only) and no effect identity (the content fallback, with a 1 s
 * window so the script's two passes are effects of their own).
 */
describe('MCP conformance suite (2026-07-28) against /mcp', () => {
  let fixture: ConformanceFixtureServer;
  let effectd: EffectdProcess;

  beforeAll(async () => {
    await ensureBuilt();
    fixture = await startConformanceFixtureServer();
    effectd = await spawnEffectd(
      ['--data-dir', tempDir(), '--config', 'test/fixtures/mcp-conformance.config.json', '--mcp-anonymous-agent', '--mcp-identity-fallback', 'content', '--mcp-identity-window-ms', '1000'],
      { EFFECTD_PROVIDER_CONF_MCP_URL: fixture.url },
    );
  }, 60_000);
  afterAll(async () => {
    await effectd?.kill('SIGTERM');
    await fixture?.close();
  });

  it('passes every scenario but the expected failures, each with its reason, and no expected failure passes', async () => {
    const started = Date.now();
    const { stdout, stderr } = await run('bash', ['scripts/mcp-conformance.sh', `${effectd.url}/mcp`, tempDir('effectd-conformance-')], { timeout: 240_000 }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`conformance failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    // The summary in CI's output.
    const installed = stderr.split('\n').filter((line) => line.startsWith('installing ')).join('\n');
    console.log(`${installed ? `${installed}\n` : ''}${stdout}(the conformance run took ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    const summary = /MCP conformance: (\d+) scenarios; passed (\d+), skipped by the suite (\d+), expected failures (\d+), unexpected failures 0, stale expected failures 0/.exec(stdout);
    expect(summary, stdout).not.toBeNull();
    // The revision's frozen requirements: 37 server scenarios scored, every failure among them expected.
    expect(stdout).toMatch(/^ {2}scored for the revision: 37 scenarios; passed \d+, expected failures \d+, unexpected failures 0, stale expected failures 0$/m);
    // The fixture tools behind the gateway: the content blocks and the progress come through.
    for (const scenario of ['tools-list', 'tools-call-simple-text', 'tools-call-error', 'tools-call-image', 'tools-call-audio', 'tools-call-embedded-resource', 'tools-call-mixed-content', 'tools-call-with-progress', 'dns-rebinding-protection', 'http-header-validation']) {
      expect(stdout).toMatch(new RegExp(`^scenario ${scenario}: passed`, 'm'));
    }
    // Both passes ran: the active suite and the revision's requirements (with the Tasks extension's scenarios).
    expect(stdout).toMatch(/^scenario tools-list: passed \(.*\) \[active \+ 2026-07-28\]$/m);
    expect(stdout).toMatch(/^scenario tasks-lifecycle: expected failure \(.*\) \[2026-07-28, not scored: extension\] — effect tasks$/m);
    // Each expected failure's reason, in the summary; the Tasks scenarios excused check by check, so
    // their other checks (the extension advertised, -32021 and -32602, the sync tool) must pass.
    expect(stdout).toMatch(/^ {2}expected \(\d+\): effect tasks: .* — tasks-capability-negotiation:sep-2663-server-rejects-undeclared-client, .*tasks-lifecycle:sep-2663-result-type-task-on-create/m);
    expect(stdout).toMatch(/^ {2}expected \(\d+\): tools only: effectd serves its contracts' tools and sagas; .* — completion-complete, /m);
  }, 300_000);

  it('refuses --mcp-anonymous-agent on an address that is not loopback', async () => {
    await expect(spawnEffectd(['--data-dir', tempDir(), '--host', '0.0.0.0', '--mcp-anonymous-agent'])).rejects.toThrow(/only binds to loopback/);
  }, 30_000);
});
