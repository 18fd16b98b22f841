import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import client from 'prom-client';
import { EffectdError } from '../core/errors.js';

/**
 * `/metrics` under `effectd start --workers N`: a scrape reaches one worker (the shared port), but
 * must show the whole instance. The worker asks the primary, the primary asks every worker for its
 * own metrics (as JSON, after its scrape hooks ran) and merges them the way each metric says
 * (prom-client's `aggregator`): counters and histograms are summed; a gauge computed from the
 * shared ledger or the broker (every worker sees the same effects) takes the maximum, so it is not
 * counted N times. A worker that does not answer in time is left out, and the answer says so in a
 * comment line; the primary not answering fails the scrape (503), never a partial sum presented as
 * the whole.
 */

type MetricsJson = client.MetricObjectWithValues<client.MetricValue<string>>[];

const GATHER = 'effectd:metrics-gather'; // worker → primary: a scrape arrived here
const REPORT = 'effectd:metrics-report'; // primary → every worker: send your own
const REPORTED = 'effectd:metrics-reported'; // worker → primary
const GATHERED = 'effectd:metrics-gathered'; // primary → the asking worker: the merged text

interface Message {
  effectd?: string;
  id?: string;
  metrics?: MetricsJson;
  text?: string;
  error?: string;
}

/** How long the primary waits for the workers' reports, and a worker for the primary's answer. */
export const REPORT_TIMEOUT_MS = 2_000;
const GATHER_TIMEOUT_MS = REPORT_TIMEOUT_MS + 1_000;

/**
 * In a worker: answers the primary's report requests with `own()` and returns how a scrape here
 * gathers the whole instance's metrics (undefined outside a cluster worker).
 */
export function workerMetrics(own: () => Promise<MetricsJson>): (() => Promise<string>) | undefined {
  if (!cluster.isWorker) return undefined;
  const waiting = new Map<string, (answer: Message) => void>();
  process.on('message', (message: Message) => {
    if (message?.effectd === REPORT && message.id) {
      void own().then(
        (metrics) => process.send?.({ effectd: REPORTED, id: message.id, metrics }),
        () => process.send?.({ effectd: REPORTED, id: message.id }), // counted as not reported
      );
    }
    if (message?.effectd === GATHERED && message.id) waiting.get(message.id)?.(message);
  });
  return () => new Promise<string>((resolve, reject) => {
    const id = randomUUID();
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new EffectdError('unavailable', `the primary process did not gather the workers' metrics within ${GATHER_TIMEOUT_MS} ms; scrape again`, { retryAfterMs: 1_000 }));
    }, GATHER_TIMEOUT_MS);
    waiting.set(id, (answer) => {
      clearTimeout(timer);
      waiting.delete(id);
      if (answer.text !== undefined) resolve(answer.text);
      else reject(new EffectdError('unavailable', `the workers' metrics could not be merged (${answer.error ?? 'no answer'}); scrape again`, { retryAfterMs: 1_000 }));
    });
    process.send?.({ effectd: GATHER, id });
  });
}

/** In the primary: a worker's gather request is answered with every live worker's metrics, merged. */
export function serveMetricsGathering(worker: Worker, workers: () => Worker[]): void {
  worker.on('message', (message: Message) => {
    if (message?.effectd !== GATHER || !message.id) return;
    void gather(workers().filter((w) => w.isConnected())).then(
      (text) => worker.isConnected() && worker.send({ effectd: GATHERED, id: message.id, text }),
      (error: unknown) => worker.isConnected() && worker.send({ effectd: GATHERED, id: message.id, error: (error as Error).message }),
    );
  });
}

async function gather(workers: Worker[]): Promise<string> {
  const id = randomUUID();
  const reports = await Promise.all(workers.map((w) => report(w, id)));
  const answered = reports.filter((r): r is MetricsJson => r !== undefined);
  const text = await client.AggregatorRegistry.aggregate(answered).metrics();
  const missing = workers.length - answered.length;
  return missing === 0 ? text : `# effectd: ${missing} of ${workers.length} workers did not report within ${REPORT_TIMEOUT_MS} ms; their counts are missing from this scrape\n${text}`;
}

function report(worker: Worker, id: string): Promise<MetricsJson | undefined> {
  return new Promise((resolve) => {
    const done = (metrics: MetricsJson | undefined) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(metrics);
    };
    const onMessage = (message: Message) => {
      if (message?.effectd === REPORTED && message.id === id) done(message.metrics);
    };
    const timer = setTimeout(() => done(undefined), REPORT_TIMEOUT_MS);
    worker.on('message', onMessage);
    try {
      worker.send({ effectd: REPORT, id });
    } catch {
      done(undefined);
    }
  });
}
