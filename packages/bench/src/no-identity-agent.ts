import type { Client, CallToolResult } from '@modelcontextprotocol/client';
import type { NoIdentityOption } from './no-identity-options.js';
import type { FinalStatus } from './scripted-agent.js';

/**
 * The agent of the no-identity lane (no-identity-lane.ts): a desktop-style MCP client that writes
 * its calls as a model does and re-sends one whose reply it lost, as MCP clients do (a new JSON-RPC
 * id, the same arguments). It sends no `_meta`, but for the reference row (`harness-meta`).
 */
const CLIENT_TIMEOUT_MS = 800;
const RESEND_MS = 300;
const MAX_TRIES = 12;

export interface Answer {
  final: FinalStatus | 'refused';
  receipt?: string;
}

/** One agent's MCP session: the official client over stdio to `effectd mcp`, with no `_meta` (but for the reference row). */
export class DesktopAgent {
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

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
