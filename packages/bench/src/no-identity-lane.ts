import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startSimulator, type RunningSimulator } from '@effectd/simulators';
import { packageRoot } from '../../../src/shared/package-root.js';
import { writeToolsConfig } from './harness/tool-config-files.js';
import { NO_IDENTITY_OPTIONS, type NoIdentityOption } from './no-identity-options.js';
import { scoreIdentity, type IntentEvidence } from './scoring.js';
import type { FinalStatus } from './scripted-agent.js';
import { DesktopAgent, sleep, type Answer } from './no-identity-agent.js';

/**
 * The MCP no-identity lane (`effectd bench --lane mcp-no-identity`, issue 28): a desktop-style
 * agent on the official MCP client SDK over stdio (`effectd mcp`, the embedded door) that sends no
 * `_meta` at all, under the lost-reply faults, with a workload that also has deliberate repeats.
 * Per option (no-identity-options.ts): duplicates, false dedups (a deliberate repeat answered
 * without happening) and refusals, from the payments simulator's own records.
 *
 * Episodes (each its own invoice, one per seed):
 * - `lost-reply`: the provider commits and drops its reply; effectd answers `unknown` (the lane's
 *   contract answers at once, answerBudgetMs 0), and the client re-sends the same call until done.
 * - `timeout`: the provider takes 1.5 s; the client's request times out at 0.8 s (its reply is
 *   lost on the MCP hop) and it re-sends the same call.
 * - `redecide`: a lost reply as in `lost-reply`, but the model decides again: a new tool call
 *   written anew (with `every-decision`, a fresh value in the identity argument).
 * - `repeat`: the user wants the invoice charged twice: the same call, decided twice.
 * - `repeat-lost-reply`: as `repeat`, and the second charge's reply is lost and re-sent.
 * A re-send is what MCP clients do after a lost reply (a new JSON-RPC id, the same arguments).
 */
export const EPISODES = ['lost-reply', 'timeout', 'redecide', 'repeat', 'repeat-lost-reply'] as const;
export type Episode = (typeof EPISODES)[number];

export interface NoIdentityCell {
  option: string;
  seed: number;
  episode: Episode;
  intended: number;
  charged: number;
  duplicates: number;
  falseDedup: number;
  missing: number;
  /** Calls refused for want of identity. */
  refusals: number;
  /** tools/call requests made (re-sends included). */
  calls: number;
  /** Replies the client met lost (a timeout, `unknown`): the evidence that the episode's fault reached it. */
  lostReplies: number;
  finals: FinalStatus[];
  error?: string;
}

async function fault(payments: RunningSimulator, action: Record<string, unknown> | undefined): Promise<void> {
  await fetch(`${payments.url}/_admin/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules: action ? [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action }] : [] }),
  });
}

async function chargesFor(payments: RunningSimulator, invoiceId: string): Promise<string[]> {
  const state = await (await fetch(`${payments.url}/_oracle/state`)).json() as { charges: { id: string; metadata: Record<string, string> }[] };
  return state.charges.filter((c) => c.metadata.invoice_id === invoiceId).map((c) => c.id);
}

/** Plays one episode and scores it from the provider's records. */
async function play(agent: DesktopAgent, payments: RunningSimulator, episode: Episode, invoiceId: string): Promise<{ intents: IntentEvidence[] }> {
  const intent = (n: number, answer: Answer, repeat: boolean): IntentEvidence => ({
    intentId: `${invoiceId}#${n}`, identity: invoiceId, multiplicity: 1, repeat,
    final: answer.final === 'refused' ? 'not_done' : answer.final, ...(answer.receipt ? { receipt: answer.receipt } : {}),
  });
  const dropAfterCommit = { type: 'drop-after-mutation' };
  switch (episode) {
    case 'lost-reply': {
      await fault(payments, dropAfterCommit);
      return { intents: [intent(1, await agent.untilAnswered(agent.decide(invoiceId, undefined)), false)] };
    }
    case 'timeout': {
      await fault(payments, { type: 'delay', ms: 1_500 });
      return { intents: [intent(1, await agent.untilAnswered(agent.decide(invoiceId, undefined)), false)] };
    }
    case 'redecide': {
      await fault(payments, dropAfterCommit);
      const first = await agent.send(agent.decide(invoiceId, undefined));
      // The model reads the lost reply as a failure and decides again: a new call, written anew.
      const answer = first === 'lost' || 'retryAfterMs' in first ? await agent.untilAnswered(agent.decide(invoiceId, undefined)) : first;
      return { intents: [intent(1, answer, false)] };
    }
    case 'repeat': {
      await fault(payments, undefined);
      const first = await agent.untilAnswered(agent.decide(invoiceId, undefined));
      const second = await agent.untilAnswered(agent.decide(invoiceId, `the user asked for a second charge of ${invoiceId}`));
      return { intents: [intent(1, first, false), intent(2, second, true)] };
    }
    case 'repeat-lost-reply': {
      await fault(payments, undefined);
      const first = await agent.untilAnswered(agent.decide(invoiceId, undefined));
      await fault(payments, dropAfterCommit);
      const second = await agent.untilAnswered(agent.decide(invoiceId, `the user asked for a second charge of ${invoiceId}`));
      return { intents: [intent(1, first, false), intent(2, second, true)] };
    }
  }
}

/** Runs every option × seed × episode: one payments simulator, one `effectd mcp` per option and seed. */
export async function runNoIdentityLane(opts: { seeds: number[]; options?: readonly NoIdentityOption[]; onCell?: (cell: NoIdentityCell) => void }): Promise<NoIdentityCell[]> {
  const payments = await startSimulator('payments', { options: {} });
  const cells: NoIdentityCell[] = [];
  try {
    for (const option of opts.options ?? NO_IDENTITY_OPTIONS) {
      for (const seed of opts.seeds) {
        const dataDir = mkdtempSync(join(tmpdir(), 'effectd-bench-noid-'));
        // Answer a lost provider reply at once (unknown), so the client meets it; settle it within 5 s.
        const config = writeToolsConfig(dataDir, { payments: payments.url }, { 'payments.charge': { settleWindowMs: 5_000, answerBudgetMs: 0 } });
        const client = new Client({ name: 'desktop-style-client', version: '1.0.0' });
        await client.connect(new StdioClientTransport({
          command: process.execPath, args: [join(packageRoot(), 'bin', 'effectd.js'), 'mcp', '--data-dir', dataDir, '--config', config, ...option.flags],
          env: { ...process.env, EFFECTD_LOG_LEVEL: 'error' } as Record<string, string>, stderr: 'ignore',
        }));
        const agent = new DesktopAgent(client, option, `run-${option.name}-${seed}`);
        try {
          for (const episode of EPISODES) {
            const invoiceId = `INV-NOID-${option.name}-${seed}-${episode}`;
            const before = { calls: agent.calls, refusals: agent.refusals, lost: agent.lost };
            let cell: NoIdentityCell;
            try {
              const { intents } = await play(agent, payments, episode, invoiceId);
              await fault(payments, undefined);
              // A delayed or dropped request may still commit after the answer: let it land before counting.
              await sleep(episode === 'timeout' ? 1_000 : 100);
              const present = await chargesFor(payments, invoiceId);
              const score = scoreIdentity(intents, { present: present.length, knownReceipts: present });
              cell = {
                option: option.name, seed, episode, intended: score.declared, charged: present.length, duplicates: score.duplicates, falseDedup: score.falseDedup, missing: score.missing,
                refusals: agent.refusals - before.refusals, calls: agent.calls - before.calls, lostReplies: agent.lost - before.lost, finals: intents.map((i) => i.final),
              };
            } catch (error) {
              cell = { option: option.name, seed, episode, intended: 0, charged: 0, duplicates: 0, falseDedup: 0, missing: 0, refusals: 0, calls: agent.calls - before.calls, lostReplies: agent.lost - before.lost, finals: [], error: (error as Error).message };
            }
            cells.push(cell);
            opts.onCell?.(cell);
          }
        } finally {
          await client.close().catch(() => undefined);
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    await payments.close();
  }
  return cells;
}
