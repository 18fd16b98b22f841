import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startSimulator, type RunningSimulator } from '@effectd/simulators';
import { packageRoot } from '../../../src/shared/package-root.js';
import { writeToolsConfig } from './harness/tool-config-files.js';
import { NO_IDENTITY_OPTIONS, type NoIdentityOption } from './no-identity-options.js';
import { scoreIdentity, type IntentEvidence } from './scoring.js';
import type { FinalStatus } from './scripted-agent.js';

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

const CLIENT_TIMEOUT_MS = 800;
const RESEND_MS = 300;
const MAX_TRIES = 12;

interface Answer {
  final: FinalStatus | 'refused';
  receipt?: string;
}

/** One agent's MCP session: the official client over stdio to `effectd mcp`, with no `_meta` (but for the reference row). */
class DesktopAgent {
  calls = 0;
  refusals = 0;
  /** Answers that did not reach the model as an outcome: a timeout, a broken stream, `unknown`. */
  lost = 0;
  private decisions = 0;
  /** The `_meta` of each decision's call (only the harness-meta reference row sends any). */
  private readonly metas = new WeakMap<Record<string, unknown>, Record<string, unknown>>();
  constructor(private readonly client: Client, private readonly option: NoIdentityOption, private readonly run: string) {}

  /** The arguments the model writes for one decision (and, for the reference row, the harness's `_meta`). */
  decide(invoiceId: string, deliberateRepeat: string | undefined): Record<string, unknown> {
    this.decisions += 1;
    const args: Record<string, unknown> = { invoiceId, amount: '49.00 USD' };
    if (this.option.repeatArgument === 'deliberate' && deliberateRepeat !== undefined) args.effectd_repeat = deliberateRepeat;
    if (this.option.repeatArgument === 'every-decision') args.effectd_repeat = `call ${this.decisions} for ${invoiceId}`;
    if (this.option.repeatArgument === 'meta') {
      this.metas.set(args, { 'dev.effectd/workflowId': this.run, 'dev.effectd/step': this.decisions, ...(deliberateRepeat !== undefined ? { 'dev.effectd/repeat': deliberateRepeat } : {}) });
    }
    return args;
  }

  /** One tools/call; a lost reply (timeout, a dropped stream) is `lost`. */
  async send(args: Record<string, unknown>): Promise<Answer | 'lost' | { retryAfterMs: number }> {
    this.calls += 1;
    let result: CallToolResult;
    try {
      const meta = this.metas.get(args);
      result = await this.client.callTool({ name: 'payments_charge', arguments: args, ...(meta ? { _meta: meta } : {}) }, { timeout: CLIENT_TIMEOUT_MS }) as CallToolResult;
    } catch {
      this.lost += 1;
      return 'lost';
    }
    const content = (result.structuredContent ?? {}) as { status?: string; receipt?: string; missingIdentity?: unknown; action?: string; retryAfterMs?: number };
    if (result.isError && content.missingIdentity !== undefined) {
      this.refusals += 1;
      return { final: 'refused' };
    }
    if (result.isError && content.action === 'retry_after') return { retryAfterMs: content.retryAfterMs ?? RESEND_MS };
    if (content.status === 'done') return { final: 'done', ...(content.receipt ? { receipt: content.receipt } : {}) };
    if (content.status === 'not_done') return { final: 'not_done' };
    if (content.status === 'unknown') {
      this.lost += 1;
      return 'lost';
    }
    return { final: 'refused' };
  }

  /** The client's way with a lost reply: send the same call again (a new JSON-RPC id) until it has an answer. */
  async untilAnswered(args: Record<string, unknown>, first?: Answer | 'lost' | { retryAfterMs: number }): Promise<Answer> {
    let answer = first ?? (await this.send(args));
    for (let tries = 1; tries < MAX_TRIES; tries += 1) {
      if (answer !== 'lost' && !('retryAfterMs' in answer)) return answer;
      await sleep(answer === 'lost' ? RESEND_MS : Math.min(answer.retryAfterMs, 1_000));
      answer = await this.send(args);
    }
    return answer !== 'lost' && !('retryAfterMs' in answer) ? answer : { final: 'unknown' };
  }
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

/** The table of docs/mcp.md: per option, summed over episodes and seeds. */
export function noIdentityTable(cells: readonly NoIdentityCell[]): string {
  const options = [...new Set(cells.map((c) => c.option))];
  const header = ['option', 'intended', 'charged', 'duplicates', 'false dedups', 'refusals', 'missing', 'calls', 'lost replies', ...EPISODES.map((e) => `${e} d/f/r`)];
  const rows = options.map((option) => {
    const mine = cells.filter((c) => c.option === option);
    const sum = (pick: (c: NoIdentityCell) => number, of = mine) => of.reduce((s, c) => s + pick(c), 0);
    const per = EPISODES.map((e) => {
      const ep = mine.filter((c) => c.episode === e);
      return `${sum((c) => c.duplicates, ep)}/${sum((c) => c.falseDedup, ep)}/${sum((c) => c.refusals, ep)}`;
    });
    return [option, String(sum((c) => c.intended)), String(sum((c) => c.charged)), String(sum((c) => c.duplicates)), String(sum((c) => c.falseDedup)), String(sum((c) => c.refusals)), String(sum((c) => c.missing)), String(sum((c) => c.calls)), String(sum((c) => c.lostReplies)), ...per];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cols: string[]) => cols.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
