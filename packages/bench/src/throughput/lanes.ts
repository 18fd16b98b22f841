import { EffectClient, type EffectRequest } from '../../../../src/sdk/index.js';
import type { DbosApp } from './dbos-lane.js';
import type { Fleet } from './fleet.js';
import type { Call } from './load.js';
import type { httpPoster } from './load.js';

type Poster = ReturnType<typeof httpPoster>;

/**
 * The effects of one lane and rep: four per workflow, spread apart in the stream (steps of one
 * workflow rarely race), every id unique to the lane so no effect is a replay.
 */
export function benchCommands(run: string, lane: string, count: number): EffectRequest[] {
  const workflows = Math.max(1, Math.ceil(count / 4));
  return Array.from({ length: count }, (_, i) => ({
    workflowId: `bench-${run}-${lane}-${i % workflows}`, step: Math.floor(i / workflows) + 1, tool: 'payments.charge', principal: 'agent:bench',
    args: { invoiceId: `INV-${run}-${lane}-${i}`, amount: 1000 + (i % 5000) },
  }));
}

/** The same charge effectd would send, POSTed straight to the provider with a fresh idempotency key. */
export function directCall(poster: Poster, paymentsUrl: string, commands: readonly EffectRequest[], run: string, lane: string): Call {
  return async (i) => {
    const { args } = commands[i]!;
    const body = JSON.stringify({ amount: args.amount, currency: 'usd', metadata: { invoice_id: args.invoiceId } });
    try {
      const res = await poster.post(`${paymentsUrl}/v1/charges`, { 'idempotency-key': `direct-${run}-${lane}-${i}`, accept: 'application/json' }, body);
      return res.status === 200;
    } catch {
      return false;
    }
  };
}

/** POST /v1/effects, round robin over the fleet's instances. */
export function httpCall(poster: Poster, fleet: Fleet, commands: readonly EffectRequest[]): Call {
  const urls = fleet.instances.map((p) => `${p.url!}/v1/effects`);
  const authorization = `Bearer ${fleet.token}`;
  return async (i) => {
    try {
      const res = await poster.post(urls[i % urls.length]!, { authorization }, JSON.stringify(commands[i]));
      return res.status === 200 && (JSON.parse(res.body) as { status?: string }).status === 'done';
    } catch {
      return false;
    }
  };
}

/** Publish → outcome consumed, through the SDK's Kafka client (one client for all callers, as in an agent process running many calls). */
export async function kafkaCaller(fleet: Fleet, brokers: string[]): Promise<{ call(commands: readonly EffectRequest[]): Call; close(): Promise<void> }> {
  const client = await EffectClient.connect({ brokers, token: fleet.token, commandsTopic: fleet.topics.commands, outcomesTopic: fleet.topics.outcomes, timeoutMs: 120_000 });
  return {
    call: (commands) => async (i) => (await client.submit(commands[i]!)).status === 'done',
    close: () => client.close(),
  };
}

/** The same command to the DBOS app (dbos-app.ts): one durable workflow per (workflow, step), answered once it finished. */
export function dbosCall(poster: Poster, app: DbosApp, commands: readonly EffectRequest[]): Call {
  const url = `${app.url}/charge`;
  return async (i) => {
    const { workflowId, step, args } = commands[i]!;
    try {
      const res = await poster.post(url, {}, JSON.stringify({ workflowId, step, args }));
      return res.status === 200 && (JSON.parse(res.body) as { status?: string }).status === 'done';
    } catch {
      return false;
    }
  };
}
