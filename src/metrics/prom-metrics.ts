import client from 'prom-client';
import type { OutcomeClass } from '../core/events.js';
import { workerMetrics } from './cluster-metrics.js';
import { METRIC } from './metric-names.js';
import type { EffectGauges } from './effect-gauges.js';
import type { PartitionLag } from './kafka-lag.js';
import type { SagaMetrics } from './saga-metrics.js';
import type { ShellMetrics } from './shell-metrics.js';

/**
 * How `--workers N` merges a gauge every worker computes from the same shared state (the ledger,
 * the broker): the largest, not the sum (cluster-metrics.ts). Everything else is summed.
 */
const SAME_IN_EVERY_WORKER = 'max';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The prom-client adapter: one registry per effectd instance, labels bounded (never effect or workflow ids). */
export class PromMetrics implements ShellMetrics, SagaMetrics {
  readonly registry = new client.Registry();
  private readonly received = new client.Counter({ name: METRIC.commandsReceived, help: 'Effect commands received, by ingress.', labelNames: ['ingress'], registers: [this.registry] });
  private readonly rejectedCounter = new client.Counter({ name: METRIC.commandsRejected, help: 'Effect commands rejected, by reason.', labelNames: ['reason'], registers: [this.registry] });
  private readonly deadLetters = new client.Counter({ name: METRIC.commandsDeadLettered, help: 'Kafka messages parked in the dead-letter topic, by reason (undecodable, invalid_command, unknown_tool, handler_error).', labelNames: ['reason'], registers: [this.registry] });
  private readonly attempts = new client.Counter({ name: METRIC.attempts, help: 'Dispatch attempts, by tool and outcome class.', labelNames: ['tool', 'outcome'], registers: [this.registry] });
  private readonly replays = new client.Counter({ name: METRIC.replays, help: 'Commands answered from the ledger without calling the provider (duplicates prevented).', labelNames: ['tool'], registers: [this.registry] });
  private readonly holds = new client.Counter({ name: METRIC.contentHolds, help: 'New steps held by the content index because the same content is done or being checked (duplicate intents prevented).', labelNames: ['tool'], registers: [this.registry] });
  private readonly effects = new client.Gauge({ name: METRIC.effects, help: 'Effects in the ledger, by state and tool (computed from the ledger at scrape time).', labelNames: ['state', 'tool'], aggregator: SAME_IN_EVERY_WORKER, registers: [this.registry] });
  private readonly appendSeconds = new client.Histogram({ name: METRIC.ledgerAppendSeconds, help: 'Ledger append latency.', labelNames: ['ledger'], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private readonly providerSeconds = new client.Histogram({ name: METRIC.providerCallSeconds, help: 'Provider call latency, by tool.', labelNames: ['tool'], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private readonly checks = new client.Counter({ name: METRIC.reconciliationChecks, help: 'Reconciliation checks at the provider, by tool and verdict.', labelNames: ['tool', 'verdict'], registers: [this.registry] });
  private readonly escalationsCounter = new client.Counter({ name: METRIC.escalations, help: 'Effects escalated to a human, by tool.', labelNames: ['tool'], registers: [this.registry] });
  private readonly lateArrivals = new client.Counter({ name: METRIC.lateArrivals, help: 'Effects proven absent that were found at the provider later (their request arrived after the settle window), by tool: each is on the operator queue.', labelNames: ['tool'], registers: [this.registry] });
  private readonly escalationsSettled = new client.Counter({ name: METRIC.escalationsSettled, help: 'Escalated effects that settled, by tool and by whom: `lookup` (effectd found the evidence later; no human was needed) or `human`.', labelNames: ['tool', 'by'], registers: [this.registry] });
  private readonly duplicatesFound = new client.Counter({ name: METRIC.duplicatesDetected, help: 'Effects for which the provider holds more than one object (found by the audit after a same-key resend: the provider forgot the key sooner than its contract says). Each needs an operator.', labelNames: ['tool'], registers: [this.registry] });
  private readonly resolutions = new client.Counter({ name: METRIC.resolutions, help: 'Escalated or terminal effects resolved by an operator, by outcome.', labelNames: ['outcome'], registers: [this.registry] });
  private readonly duplicates = new client.Counter({ name: METRIC.duplicatesPrevented, help: 'Duplicates prevented, by tool and reason: replay (answered from the ledger, provider not called) or hold (content index).', labelNames: ['tool', 'reason'], registers: [this.registry] });
  private readonly escalationsOpen = new client.Gauge({ name: METRIC.escalationsOpen, help: 'Effects waiting for an operator (escalated, or terminal_failure), by tool and state.', labelNames: ['tool', 'state'], aggregator: SAME_IN_EVERY_WORKER, registers: [this.registry] });
  private readonly oldestUnknown = new client.Gauge({ name: METRIC.oldestUnknownSeconds, help: 'Age of the oldest effect still unknown or escalated, by tool (absent when none is open).', labelNames: ['tool'], aggregator: SAME_IN_EVERY_WORKER, registers: [this.registry] });
  private readonly sagaRuns = new client.Counter({ name: METRIC.sagaRuns, help: 'Saga runs that ended, by saga and outcome.', labelNames: ['saga', 'outcome'], registers: [this.registry] });
  private readonly compensations = new client.Counter({ name: METRIC.compensations, help: 'Compensations dispatched, by tool.', labelNames: ['tool'], registers: [this.registry] });
  private readonly cacheStreams = new client.Gauge({ name: METRIC.workflowCacheStreams, help: 'Workflow streams whose folded state this instance holds in memory.', registers: [this.registry] });
  private readonly cacheEffects = new client.Gauge({ name: METRIC.workflowCacheEffects, help: 'Effects held in cached workflow states (bounded by effectd_workflow_cache_max_effects).', registers: [this.registry] });
  private readonly cacheMaxEffects = new client.Gauge({ name: METRIC.workflowCacheMaxEffects, help: 'The bound on cached effects (EFFECTD_WORKFLOW_CACHE).', registers: [this.registry] });
  private readonly kafkaLag = new client.Gauge({ name: METRIC.kafkaConsumerLag, help: 'Messages of the commands topic not yet committed by the consumer group, by partition.', labelNames: ['topic', 'partition'], aggregator: SAME_IN_EVERY_WORKER, registers: [this.registry] });
  private readonly scrapeHooks = new Set<() => Promise<void>>();
  private readonly unknownSeconds = new client.Histogram({ name: METRIC.unknownSeconds, help: 'Time an effect spent unknown (or with a human) before it settled, by tool.', labelNames: ['tool'], buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 86400], registers: [this.registry] });

  commandReceived(ingress: string): void {
    this.received.inc({ ingress });
  }
  ledgerAppend(ledger: string, ms: number): void {
    this.appendSeconds.observe({ ledger }, ms / 1000);
  }
  attempt(tool: string, outcome: OutcomeClass): void {
    this.attempts.inc({ tool, outcome });
  }
  providerCall(tool: string, ms: number): void {
    this.providerSeconds.observe({ tool }, ms / 1000);
  }
  held(tool: string): void {
    this.holds.inc({ tool });
    this.duplicates.inc({ tool, reason: 'hold' });
  }
  replayed(tool: string): void {
    this.replays.inc({ tool });
    this.duplicates.inc({ tool, reason: 'replay' });
  }
  reconciliationCheck(tool: string, verdict: string): void {
    this.checks.inc({ tool, verdict });
  }
  escalated(tool: string): void {
    this.escalationsCounter.inc({ tool });
  }
  lateArrival(tool: string): void {
    this.lateArrivals.inc({ tool });
  }
  escalationSettled(tool: string, by: 'lookup' | 'human'): void {
    this.escalationsSettled.inc({ tool, by });
  }
  duplicateDetected(tool: string): void {
    this.duplicatesFound.inc({ tool });
  }
  resolved(outcome: string): void {
    this.resolutions.inc({ outcome });
  }
  leftUnknown(tool: string, ms: number): void {
    this.unknownSeconds.observe({ tool }, ms / 1000);
  }
  rejected(reason: string): void {
    this.rejectedCounter.inc({ reason });
  }
  deadLettered(reason: string): void {
    this.deadLetters.inc({ reason });
  }
  /**
   * Creates every tool's counter series at 0, so the first increment after a start is a visible
   * step for rate()/increase() rather than a series that appears already at 1.
   */
  initTools(tools: string[]): void {
    for (const tool of tools) {
      for (const outcome of ['committed', 'failed_before_effect', 'terminal_failure', 'unknown'] satisfies OutcomeClass[]) this.attempts.inc({ tool, outcome }, 0);
      for (const reason of ['replay', 'hold']) this.duplicates.inc({ tool, reason }, 0);
      for (const verdict of ['committed', 'not_committed', 'pending', 'unanswered']) this.checks.inc({ tool, verdict }, 0);
      this.replays.inc({ tool }, 0);
      this.holds.inc({ tool }, 0);
      this.escalationsCounter.inc({ tool }, 0);
      for (const by of ['lookup', 'human']) this.escalationsSettled.inc({ tool, by }, 0);
      this.duplicatesFound.inc({ tool }, 0);
      this.lateArrivals.inc({ tool }, 0);
    }
    for (const outcome of ['committed', 'failed_before_effect']) this.resolutions.inc({ outcome }, 0);
  }

  initSagas(sagas: string[]): void {
    for (const saga of sagas) for (const outcome of ['completed', 'compensated', 'compensation_failed']) this.sagaRuns.inc({ saga, outcome }, 0);
  }

  sagaRun(saga: string, outcome: string): void {
    this.sagaRuns.inc({ saga, outcome });
  }
  compensation(tool: string): void {
    this.compensations.inc({ tool });
  }

  setEffectGauges(gauges: EffectGauges): void {
    this.effects.reset();
    for (const { tool, state, count } of gauges.byToolAndState) this.effects.set({ state, tool }, count);
    this.escalationsOpen.reset();
    for (const { tool, state, count } of gauges.waitingForHuman) this.escalationsOpen.set({ tool, state }, count);
    this.oldestUnknown.reset();
    for (const { tool, seconds } of gauges.oldestUnknownSeconds) this.oldestUnknown.set({ tool }, seconds);
  }

  setWorkflowCache(stats: { streams: number; effects: number; maxEffects: number }): void {
    this.cacheStreams.set(stats.streams);
    this.cacheEffects.set(stats.effects);
    this.cacheMaxEffects.set(stats.maxEffects);
  }

  /** `undefined` when the lag could not be measured: no series beats a stale one. */
  setKafkaLag(lags: PartitionLag[] | undefined): void {
    this.kafkaLag.reset();
    for (const { topic, partition, lag } of lags ?? []) this.kafkaLag.set({ topic, partition: String(partition) }, lag);
  }

  /** Runs `hook` before every scrape (gauges computed from the ledger or the broker); returns how to remove it. */
  beforeScrape(hook: () => Promise<void>): () => void {
    this.scrapeHooks.add(hook);
    return () => this.scrapeHooks.delete(hook);
  }

  /** In a worker of `--workers N`: the whole instance's metrics, through the primary (cluster-metrics.ts). */
  private readonly gatherWorkers = workerMetrics(() => this.own());

  /** The exposition text: this process's, or with `--workers N` every worker's, merged. */
  async scrape(): Promise<string> {
    if (this.gatherWorkers) return this.gatherWorkers();
    await this.runScrapeHooks();
    return this.registry.metrics();
  }

  /** This process's own metrics, after the scrape hooks brought the computed gauges up to date. */
  private async own() {
    await this.runScrapeHooks();
    return this.registry.getMetricsAsJSON();
  }

  private async runScrapeHooks(): Promise<void> {
    await Promise.all([...this.scrapeHooks].map((hook) => hook()));
  }
}
