import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCaptured } from '../support/run-captured.js';
import type { RunningSimulator } from '../../packages/simulators/src/server.js';
import { getJson, postJson, startEffectd, startPayments, tempDir, waitFor, writeToolsConfig, type InProcessEffectd } from '../support/effectd-harness.js';

/**
 * A client no one here wrote: the Python MCP SDK (`mcp` from PyPI) in a virtualenv this test
 * creates once under ~/.cache/effectd (EFFECTD_MCP_PY_VENV overrides), calling a tool over
 * Streamable HTTP with a bearer token and `_meta` identity (test/support/mcp_client.py). When the
 * virtualenv cannot be made (no python3 venv, or pip cannot reach PyPI) the suite is reported as
 * skipped with the reason, never as a pass.
 */
const MCP_PY_VERSION = '2.3.0';
const venv = process.env.EFFECTD_MCP_PY_VENV ?? join(homedir(), '.cache', 'effectd', `mcp-py-${MCP_PY_VERSION}`);
const python = join(venv, 'bin', 'python');
const script = resolve('test/support/mcp_client.py');

const run = (command: string, args: string[], timeoutMs: number) => runCaptured(command, args, { timeoutMs });

/** The virtualenv with mcp==2.3.0, made once and reused (undefined: ready; a string: why not). */
async function ensureVenv(): Promise<string | undefined> {
  const check = async () => (await run(python, ['-c', `import importlib.metadata as m, sys; sys.exit(0 if m.version("mcp") == "${MCP_PY_VERSION}" else 1)`], 30_000)).status === 0;
  if (existsSync(python) && (await check())) return undefined;
  mkdirSync(join(venv, '..'), { recursive: true });
  const made = await run('python3', ['-m', 'venv', venv], 120_000);
  if (made.status !== 0) return `python3 -m venv ${venv} failed: ${made.stderr.trim().split('\n').slice(-2).join(' ')}`;
  const pip = await run(join(venv, 'bin', 'pip'), ['install', '--disable-pip-version-check', '-q', `mcp==${MCP_PY_VERSION}`], 600_000);
  if (pip.status !== 0) return `pip install mcp==${MCP_PY_VERSION} failed (PyPI unreachable?): ${pip.stderr.trim().split('\n').slice(-2).join(' ')}`;
  return (await check()) ? undefined : `mcp ${MCP_PY_VERSION} is not importable from ${venv} after pip install`;
}

const unavailable = await ensureVenv();
const charges = async (sim: RunningSimulator) => (await getJson(`${sim.url}/_oracle/state`)).body.charges as { id: string; metadata: Record<string, string> }[];

interface PyResult { isError: boolean; structuredContent: Record<string, unknown> | null; text: string | null; protocolVersion: string | null }

(unavailable === undefined ? describe : describe.skip)(unavailable === undefined ? `MCP with the Python SDK client (mcp ${MCP_PY_VERSION} from PyPI) over Streamable HTTP` : `skipped: the Python mcp SDK client is unavailable: ${unavailable}`, () => {
  let payments: RunningSimulator;
  let effectd: InProcessEffectd;
  let token = '';
  const pyCall = async (tool: string, args: unknown, meta: unknown): Promise<PyResult> => {
    const out = await run(python, [script, `${effectd.url}/mcp`, token, tool, JSON.stringify(args), JSON.stringify(meta)], 60_000);
    if (out.status !== 0) throw new Error(`mcp_client.py exited ${out.status}: ${out.stderr}`);
    return JSON.parse(out.stdout.trim().split('\n').pop()!) as PyResult;
  };

  beforeAll(async () => {
    payments = await startPayments();
    const dataDir = tempDir();
    effectd = await startEffectd({ dataDir, configFile: writeToolsConfig(dataDir, { payments: payments.url }, { 'payments.charge': { settleWindowMs: 5_000 } }) });
    token = effectd.agent.authorization!.slice('Bearer '.length);
  });
  afterAll(async () => {
    await effectd?.close();
    await payments?.close();
  });

  it('commit-then-drop: the first call is unknown (not isError), the re-issued call settles, ONE charge at the provider', async () => {
    await postJson(`${payments.url}/_admin/faults`, { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    // The re-issue path (reconcile-first) is the point here: no call waits for an inline settle.
    const meta = { 'dev.effectd/workflowId': 'wf-python', 'dev.effectd/step': 'charge', 'dev.effectd/waitMs': 0 };
    const args = { invoiceId: 'INV-PY-1', amount: '49.00 USD' };
    const first = await pyCall('payments_charge', args, meta);
    await postJson(`${payments.url}/_admin/faults`, { rules: [] });
    expect(first.isError).toBe(false);
    expect(first.structuredContent).toMatchObject({ status: 'unknown', reference: expect.any(String) });
    expect(first.text).toMatch(/Do not start another payments.charge for invoice INV-PY-1\./);

    // The harness re-issues the call: a new session, a new JSON-RPC id, the same _meta.
    const settled = await waitFor('the re-issued Python call to settle', async () => {
      const again = await pyCall('payments_charge', args, meta);
      expect(again.isError).toBe(false);
      return again.structuredContent?.status === 'done' ? again : undefined;
    }, 30_000, 200);
    const truth = (await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-PY-1');
    expect(truth).toHaveLength(1);
    expect(settled.structuredContent).toMatchObject({ status: 'done', receipt: truth[0]!.id, effectId: first.structuredContent!.effectId });
  }, 90_000);

  it('without _meta identity the Python client gets the tool error that says what to send; nothing is charged', async () => {
    const result = await pyCall('payments_charge', { invoiceId: 'INV-PY-NOID', amount: 100 }, {});
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'invalid_command', missingIdentity: ['dev.effectd/workflowId', 'dev.effectd/step'] });
    expect(result.text).toContain('params._meta of tools/call');
    expect((await charges(payments)).filter((c) => c.metadata.invoice_id === 'INV-PY-NOID')).toHaveLength(0);
  }, 60_000);
});
