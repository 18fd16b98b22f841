import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { workflowCommand } from '../../src/cli/workflow.command.js';
import type { DispatchResult } from '../../src/core/dispatch-result.js';
import { isEffectdError } from '../../src/core/errors.js';
import { IDENTIFIER_MAX, identifierProblem } from '../../src/core/identifiers.js';
import { encodeCommand, HttpEffectClient } from '../../src/sdk/index.js';
import { decodeCommand } from '../../src/transport/wire/command-codec.js';
import { postJson, startEffectd, type InProcessEffectd } from '../support/effectd-harness.js';

/**
 * Issue 27, rule 5: one identifier rule for workflow ids, steps, slots and tenants
 * (src/core/identifiers.ts), the same at every door — HTTP, the Kafka codec, MCP, the CLI, the
 * SDK's URL helpers — and whatever one door accepts round-trips through GET /v1/workflows/:id, the
 * CLI (`effectd workflow <id>`) and the SDK. `.` and `..` were accepted as workflow ids and could
 * then be read by none of them (the URL parser removes those segments).
 */
const REFUSED: [string, string][] = [
  ['empty', ''],
  ['"."', '.'],
  ['".."', '..'],
  ['a NUL', 'a\u0000b'],
  ['a newline', 'run\n7'],
  ['DEL', 'x\u007f'],
  ['a C1 control (NEL)', 'x\u0085'],
  ['a lone surrogate', 'x\uD800'],
  ['one character too many', 'w'.repeat(IDENTIFIER_MAX.workflowId + 1)],
];

/** Accepted, and awkward for a URL: each must come back unchanged through every reader. */
const ACCEPTED = ['run-7f3a', '...', '.hidden', 'end.', 'a/b', 'a b', '%2e', '%2E%2E', 'a?b#c', 'back\\slash', 'ünï-😀', 'a%2Fb', 'MiXeD', '+&=;,'];

describe('one identifier rule, at every door (issue 27, rule 5)', () => {
  let effectd: InProcessEffectd;
  let token: string;
  let sdk: HttpEffectClient;
  let mcp: Client;
  const charge = (workflowId: string, extra: Record<string, unknown> = {}) => ({ workflowId, step: 1, tool: 'payments.charge', args: { invoiceId: 'INV-ID', amount: 4900 }, ...extra });

  beforeAll(async () => {
    effectd = await startEffectd({
      dispatcher: async (): Promise<DispatchResult> => ({ kind: 'response', status: 200, headers: { 'content-type': 'application/json' }, body: { id: 'ch_ident', object: 'charge', status: 'succeeded' }, latencyMs: 1 }),
    });
    token = effectd.agent.authorization!.slice('Bearer '.length);
    sdk = new HttpEffectClient({ url: effectd.url, token });
    mcp = new Client({ name: 'identifier-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${effectd.url}/mcp`), { requestInit: { headers: effectd.agent } }));
  });
  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await effectd?.close();
  });

  /** `effectd workflow <id> --json` in this process: what it printed, or what it refused with. */
  async function cli(workflowId: string): Promise<{ printed?: { workflowId: string }; error?: string }> {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      await workflowCommand.run({ url: effectd.url, token, json: true }, [workflowId], {});
      return { printed: JSON.parse(String(log.mock.calls[0]?.[0])) as { workflowId: string } };
    } catch (error) {
      return { error: (error as Error).message };
    } finally {
      log.mockRestore();
    }
  }

  for (const [what, id] of REFUSED) {
    it(`${what}: refused by every door, naming the field and the allowed form`, async () => {
      const problem = identifierProblem('workflowId', id);
      expect(problem, 'the rule itself').toMatch(/^workflowId /);
      expect(problem).toMatch(/1–256 characters of text without control characters, other than "\." and "\.\."/);

      // HTTP: the command's body.
      const http = await postJson(`${effectd.url}/v1/effects`, charge(id), effectd.agent);
      expect(http.status).toBe(400);
      expect(http.body.fields.map((f: { path: string }) => f.path)).toContain('workflowId');
      expect(http.body.message).toContain('workflowId');
      // The same rule for steps, slots and tenants.
      if (id !== '') {
        for (const field of ['step', 'slot', 'tenant'] as const) {
          const other = await postJson(`${effectd.url}/v1/effects`, { ...charge('wf-ok'), [field]: id.length > 200 ? 'x'.repeat(IDENTIFIER_MAX[field] + 1) : id }, effectd.agent);
          expect(other.status, field).toBe(400);
          expect(other.body.message, field).toContain(field);
        }
      }

      // Kafka: the SDK's encoder and the ingress's codec, then the gateway (as the Kafka ingress submits).
      // (Text no UTF-8 can carry, a lone surrogate, is refused by the codec already, naming workflow_id.)
      const decoded = decodeCommand(Buffer.from(encodeCommand(charge(id) as never, 'c-1')));
      if (decoded.ok) {
        const kafka = await effectd.runtime.gateway.submit(effectd.runtime.gateway.authenticate(token, 'kafka'), decoded.command).then(() => undefined, (e: unknown) => e);
        expect(isEffectdError(kafka, 'invalid_command'), String(kafka)).toBe(true);
        expect((kafka as Error).message).toContain('workflowId');
      } else {
        expect(decoded.detail).toMatch(/workflow_id/);
      }

      // MCP: the identity in _meta.
      const result = await mcp.callTool({ name: 'payments_charge', arguments: { invoiceId: 'INV-ID', amount: 4900 }, _meta: { 'dev.effectd/workflowId': id, 'dev.effectd/step': 1 } });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('workflowId');

      // The CLI and the SDK's URL helpers refuse it before any request, naming the field.
      expect((await cli(id)).error).toContain('workflowId');
      const refusedBySdk = await sdk.history(id).then(() => undefined, (e: unknown) => e);
      expect(isEffectdError(refusedBySdk, 'invalid_command')).toBe(true);
      expect((refusedBySdk as Error).message).toContain('workflowId');
    });
  }

  it('every accepted id round-trips: HTTP GET /v1/workflows/:id, the CLI, the SDK, MCP', async () => {
    for (const id of ACCEPTED) {
      expect(identifierProblem('workflowId', id), id).toBeUndefined();
      const submitted = await postJson(`${effectd.url}/v1/effects`, charge(id), effectd.agent);
      expect(submitted.status, id).toBe(200);
      const read = await fetch(`${effectd.url}/v1/workflows/${encodeURIComponent(id)}`, { headers: effectd.agent });
      expect(read.status, id).toBe(200);
      const view = (await read.json()) as { workflowId: string; effects: unknown[] };
      expect(view.workflowId, id).toBe(id);
      expect(view.effects, id).toHaveLength(1);
      expect((await cli(id)).printed?.workflowId, id).toBe(id);
      const history = await sdk.history(id);
      expect(history.map((s) => s.step), id).toEqual(['1']);
      const mcpHistory = await mcp.callTool({ name: 'effectd_history', arguments: { workflowId: id } });
      expect(mcpHistory.isError, id).toBeFalsy();
    }
  });
});
