import type { AgentOutcome } from '../core/agent-answer.js';
import { EffectdError, isErrorCode, type ErrorCode } from '../core/errors.js';
import { pathSegment } from '../core/identifiers.js';
import type { CatalogTool } from './catalog.js';
import { refusalOfBody, type EffectRefusal } from './refusals.js';

/** effectd's answer to one submitted effect over HTTP: its three-state outcome, or the command's refusal. */
export type EffectResult = AgentOutcome | EffectRefusal;

export interface HttpEffectClientOptions {
  /** effectd's base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** An agent credential (never an operator one in a harness). */
  token: string;
  /** Per request; a request that times out is answered `unknown`, never thrown away. */
  timeoutMs?: number;
}

export interface EffectSubmission {
  workflowId: string;
  step: string | number;
  slot?: string | number;
  tool: string;
  args: Record<string, unknown>;
  repeat?: { reason: string };
  principal?: string;
}

export interface Decision {
  tool: string;
  args: Record<string, unknown>;
}

export interface HistoryStep {
  step: string;
  decision?: Decision;
  outcomes: { slot: string; effectId: string; status: 'done' | 'not_done' | 'unknown'; receipt?: string; message: string }[];
}

/**
 * What a harness uses over HTTP: submit effects, journal decisions, read the history of facts.
 * It never mints keys; workflowId and step come from the harness.
 */
export class HttpEffectClient {
  constructor(private readonly options: HttpEffectClientOptions) {}

  /**
   * Submits one effect. A lost or timed-out answer is `unknown` (the effect may exist): ask again
   * with the same step. A command effectd did not accept (HTTP 4xx: bad input, an unknown tool, a
   * forbidden tenant, a changed intent for a declared step) is answered `refused`, never `not_done`:
   * for a changed intent, `error.recorded` says where the step's recorded effect stands. effectd
   * unable to answer now (5xx) throws its coded error (`unavailable`: send the same effect again).
   */
  async submit(effect: EffectSubmission): Promise<EffectResult> {
    try {
      const { status, body } = await this.request('POST', '/v1/effects', effect);
      if ((status === 200 || status === 409) && typeof (body as { status?: unknown } | undefined)?.status === 'string') return body as AgentOutcome;
      if (status >= 400 && status < 500 && status !== 408 && status !== 429) return refusalOfBody(status, body, codeOfStatus(status));
      throw refusal(status, body, `effectd could not answer the effect (HTTP ${status}): ${(body as { message?: string } | undefined)?.message ?? JSON.stringify(body)}`);
    } catch (error) {
      if ((error as Error).name !== 'TimeoutError' && !(error instanceof TypeError)) throw error;
      return {
        status: 'unknown', effectId: '', state: 'unknown', tool: effect.tool, target: '', replayed: false,
        message: `unknown: no answer from effectd (${(error as Error).message}); submit step ${effect.step} again — it is the same effect and will not run twice.`,
      };
    }
  }

  /** effectd's tool catalog (`GET /v1/tools`): each tool's description and the JSON Schema of its arguments. */
  async tools(): Promise<CatalogTool[]> {
    const { tools } = (await this.ok('GET', '/v1/tools')) as { tools: CatalogTool[] };
    return tools.map(({ name, description, reversibility, argsSchema }) => ({ name, description, reversibility, argsSchema }));
  }

  async effect(effectId: string): Promise<AgentOutcome> {
    return (await this.ok('GET', `/v1/effects/${pathSegment('effectId', effectId)}`)) as AgentOutcome;
  }

  /** Journals a decision; when the step was decided already, the recorded one comes back (`replayed`). */
  async recordDecision(workflowId: string, step: string, decision: Decision & { decidedBy?: string }): Promise<{ decision: Decision; replayed: boolean }> {
    return (await this.ok('POST', `/v1/workflows/${pathSegment('workflowId', workflowId)}/decisions`, { step, ...decision })) as { decision: Decision; replayed: boolean };
  }

  async decisions(workflowId: string): Promise<Map<string, Decision>> {
    const { status, body } = await this.request('GET', `/v1/workflows/${pathSegment('workflowId', workflowId)}/decisions`);
    if (status === 404) return new Map();
    if (status !== 200) throw refusal(status, body, `effectd: HTTP ${status} reading decisions`);
    return new Map((body as { decisions: (Decision & { step: string })[] }).decisions.map((d) => [d.step, { tool: d.tool, args: d.args }]));
  }

  /** The facts of the workflow so far, from the ledger: what to hand the model instead of its own memory. */
  async history(workflowId: string): Promise<HistoryStep[]> {
    return ((await this.ok('GET', `/v1/workflows/${pathSegment('workflowId', workflowId)}/history`)) as { steps: HistoryStep[] }).steps;
  }

  private async ok(method: string, path: string, body?: unknown): Promise<unknown> {
    const answer = await this.request(method, path, body);
    if (answer.status >= 300) throw refusal(answer.status, answer.body, `effectd: ${method} ${path} → HTTP ${answer.status}: ${(answer.body as { message?: string })?.message ?? ''}`);
    return answer.body;
  }

  private async request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${this.options.url.replace(/\/+$/, '')}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
}

/**
 * effectd's answer to a request it did not carry out, as the coded error it raised: its body says
 * `{ error: <code>, message, … }`. Without a code (a proxy's answer), the code follows the status.
 */
function refusal(status: number, body: unknown, message: string): EffectdError {
  const { error: code, effectId, recorded } = (body ?? {}) as { error?: unknown; effectId?: unknown; recorded?: unknown };
  // A 503/500 after the effect was recorded carries what was (effectId, recorded): kept, so a harness never takes it for not_done.
  return new EffectdError(isErrorCode(code) ? code : codeOfStatus(status), message, { status, ...(recorded !== undefined ? { effectId, recorded } : {}) });
}

function codeOfStatus(status: number): ErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status >= 500 || status === 408 || status === 429) return 'unavailable';
  return status >= 400 ? 'invalid_command' : 'internal';
}
