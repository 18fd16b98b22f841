import { startSimulator, type RunningSimulator, type SimulatorKind, type StartOptions } from '../../../packages/simulators/src/server.js';
import type { FaultRule } from '../../../packages/simulators/src/faults.js';
import type { RequestLogEntry } from '../../../packages/simulators/src/request-log.js';

export interface SimResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface SendOptions {
  key?: string;
  headers?: Record<string, string>;
  /** Send Stripe-style application/x-www-form-urlencoded instead of JSON. */
  form?: boolean;
  signal?: AbortSignal;
}

type FaultRuleInput = { match?: Partial<FaultRule['match']>; action: FaultRule['action'] };

/** A test's handle on one running simulator: the provider API plus its admin and oracle endpoints. */
export class SimClient {
  constructor(readonly sim: RunningSimulator) {}

  static async start<K extends SimulatorKind>(kind: K, opts: StartOptions<K> = {}): Promise<SimClient> {
    return new SimClient(await startSimulator(kind, opts));
  }

  get url(): string {
    return this.sim.url;
  }

  async post<T = any>(path: string, body: unknown, opts: SendOptions = {}): Promise<SimResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key !== undefined) headers['Idempotency-Key'] = opts.key;
    headers['content-type'] = opts.form === true ? 'application/x-www-form-urlencoded' : 'application/json';
    const payload = opts.form === true ? toForm(body as Record<string, unknown>) : JSON.stringify(body);
    return read<T>(await fetch(this.url + path, { method: 'POST', headers, body: payload, signal: opts.signal }));
  }

  async get<T = any>(path: string): Promise<SimResponse<T>> {
    return read<T>(await fetch(this.url + path));
  }

  async oracle<T = any>(): Promise<T> {
    return (await this.get<T>('/_oracle/state')).body;
  }

  async faults(rules: FaultRuleInput[]): Promise<SimResponse> {
    return this.post('/_admin/faults', { rules });
  }

  async advance(ms: number): Promise<number> {
    return (await this.post<{ now: number }>('/_admin/clock', { advanceMs: ms })).body.now;
  }

  async reset(): Promise<void> {
    await this.post('/_admin/reset', {});
  }

  async requests(): Promise<RequestLogEntry[]> {
    return (await this.get<{ requests: RequestLogEntry[] }>('/_admin/requests')).body.requests;
  }

  /** Resolves once the simulator has logged `count` requests (a logged request holds its key). */
  async waitForRequests(count: number, timeoutMs = 2000): Promise<RequestLogEntry[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const log = await this.requests();
      if (log.length >= count) return log;
      if (Date.now() > deadline) throw new Error(`expected ${count} logged requests, saw ${log.length}`);
      await sleep(10);
    }
  }

  close(): Promise<void> {
    return this.sim.close();
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries `check` until it stops throwing, for effects that land in real time. */
export async function eventually(check: () => Promise<void>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(25);
    }
  }
}

async function read<T>(res: Response): Promise<SimResponse<T>> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** `{metadata: {k: 'v'}}` → `metadata[k]=v`, as the Stripe SDKs encode it. */
function toForm(body: Record<string, unknown>, prefix = '', out = new URLSearchParams()): string {
  for (const [key, value] of Object.entries(body)) {
    const name = prefix === '' ? key : `${prefix}[${key}]`;
    if (value !== null && typeof value === 'object') toForm(value as Record<string, unknown>, name, out);
    else out.append(name, String(value));
  }
  return out.toString();
}
