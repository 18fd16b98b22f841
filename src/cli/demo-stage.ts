import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHttpServer, type HttpServer } from '../api/http-server.js';
import type { Settings } from '../config/settings-loader.js';
import { simulatorCall, spawnSimulator } from '@effectd/simulators';
import { createRuntime, type EffectdRuntime } from '../runtime/effectd-runtime.js';

interface Charge { id: string; amount: number; currency: string; metadata: Record<string, string> }
type LoggedRequest = { method: string; path: string; idempotencyKey: string | null; status: number | string; replayed: boolean };

/** What both demos stand on: a payments simulator in its own process, effectd embedded on SQLite, a narrator. */
export interface DemoStage {
  runtime: EffectdRuntime;
  server: HttpServer;
  say(line?: string): void;
  /** The provider commits the first charge, then drops the connection before replying. */
  armLostReply(): Promise<void>;
  /** Prints the provider's own records; answers how many charges it holds. */
  groundTruth(): Promise<number>;
  seconds(): string;
  close(): Promise<void>;
}

export async function openDemoStage(settings: Settings, dataDirOption: string | undefined, title: string, serving: (url: string) => string): Promise<DemoStage> {
  const started = performance.now();
  const dataDir = dataDirOption ? resolve(dataDirOption) : mkdtempSync(join(tmpdir(), 'effectd-demo-'));
  const say = (line = '') => console.log(line);
  say(`${title}\n`);
  const payments = await spawnSimulator('payments');
  say(`1. Simulated payment provider (Stripe v1 semantics) running in its own process (pid ${payments.pid}) at ${payments.url}`);
  const runtime = await createRuntime({ dataDir, settings, providerUrls: { payments: payments.url } });
  const server = await startHttpServer(runtime, 0, '127.0.0.1', settings.http);
  runtime.startReconciler();
  say(`2. effectd (embedded SQLite ledger at ${dataDir}/ledger.db) ${serving(server.url)}`);
  return {
    runtime, server, say,
    armLostReply: async () => {
      await simulatorCall(payments.url, '/_admin/faults', { rules: [{ match: { method: 'POST', pathPrefix: '/v1/charges', nth: 1 }, action: { type: 'drop-after-mutation' } }] });
    },
    groundTruth: async () => {
      const truth = await simulatorCall<{ charges: Charge[] }>(payments.url, '/_oracle/state');
      const requests = await simulatorCall<{ requests: LoggedRequest[] }>(payments.url, '/_admin/requests');
      say('\nProvider ground truth (its own records, not what effectd says):');
      for (const charge of truth.charges) say(`  charge ${charge.id}: ${charge.amount} ${charge.currency} for ${charge.metadata.invoice_id} (reference ${charge.metadata.effectd_ref})`);
      say(`  requests it received: ${requests.requests.filter((r) => r.method === 'POST').map((r) => `POST ${r.path} key=${r.idempotencyKey ?? '-'} → ${r.status}${r.replayed ? ' (replayed)' : ''}`).join('; ')}`);
      return truth.charges.length;
    },
    seconds: () => ((performance.now() - started) / 1000).toFixed(1),
    close: async () => {
      await server.close();
      await runtime.close();
      await payments.stop();
    },
  };
}
