import { BENCH_TIMINGS, BENCH_TOOL_NAMES, baselineTools, benchTool } from './bench-config.js';
import { exchange, sleep, type ExchangeRequest } from './bench-http.js';
import { CellProviders } from './cell-providers.js';
import type { EffectdEndpoint, EffectdFleet, EffectdProcess } from './effectd-fleet.js';
import { chooseTarget, type ArmedFault, type EffectdControls, type FaultAgent } from './faults.js';
import { faultSpec } from './fault-registry.js';
import { Gate } from './gate.js';
import { collateralWrites } from './limbo/collateral.js';
import { limboMeasures, type LimboMeasures } from './limbo/limbo-measures.js';
import { judgeLateArrivals, readLateArrivals, type LateEffectView } from './late-arrivals.js';
import { chargedAmounts, recordsOf, sagaTruth, type Oracles, type SagaTruth } from './ground-truth.js';
import type { KafkaPair } from './kafka-lane.js';
import { isEffectd, type BenchPolicy, type FaultName } from './names.js';
import { McpDirectPolicy, McpEffectdPolicy } from './policies/mcp.js';
import { startBenchUpstreamMcp } from './upstream-mcp.js';
export { STALL_LIMIT_MS } from './names.js';
import { BlindPolicy } from './policies/blind.js';
import { EffectdPolicy, headers } from './policies/effectd.js';
import { KAFKA_ANSWER_MS, KafkaEffectdPolicy } from './policies/effectd-kafka.js';
import { NativeOrNeverPolicy } from './policies/native-or-never.js';
import type { Policy, Send } from './policies/policy.js';
import { SdkRetryPolicy } from './policies/sdk-retry.js';
import { ProviderProxy, type LateDelivery } from './provider-proxy.js';
import { Rng } from './rng.js';
import { EffectdSagaHarness, effectReason, HttpSagaIngress, readSaga, type SagaIngress, type SagaRun, type StartAnswer } from './saga-harness.js';
import type { SagaPlan } from './saga-plans.js';
import { BaselineSagaScript } from './saga-script.js';
import { latencySummary, scoreCell, scoreSaga, type IdentityEvidence, type IntentEvidence } from './scoring.js';
import { profileFor, REDECIDING_PROFILE, ScriptedAgent, type AgentRun, type IntentOutcome, type TranscriptEntry } from './scripted-agent.js';
import { workload as findWorkload, type IntentSpec, type ProviderKind } from './workloads.js';
import { CodedError } from '../../../src/shared/coded-error.js';

export interface CellSpec {
  index: number;
  workload: string;
  fault: FaultName;
  policy: BenchPolicy;
  seed: number;
  /** Saga workloads: the step its provider refuses (a definite 4xx), or 'none'. */
  failAt?: string;
}

/** One cell's result, as written to the JSON file (one object per cell). */
export interface CellResult {
  workload: string;
  fault: FaultName;
  policy: BenchPolicy;
  seed: number;
  /** Saga workloads: the step refused by its provider ('none': no refusal). */
  failAt?: string;
  /** How the agent reached effectd: its HTTP API, or effect commands on Kafka (the rebalance cells). */
  ingress?: 'http' | 'kafka';
  declared: number;
  duplicates: number;
  /**
   * Duplicates effectd itself detected and reported (the extra objects in the `duplicates` of its
   * effects, GET /v1/effects/:id, read after its audit had time to run); 0 for the baselines,
   * which detect nothing. Counted apart from `duplicates`, which come from the providers' oracles.
   */
  detectedDuplicates: number;
  /**
   * Late arrivals (late-delivery): requests the fault delivered to the provider after the tool's
   * settle window that the provider committed (`lateInjected`), those the system itself accounts
   * for (`lateDetected`: effectd recorded a LateArrivalDetected on the effect the request belongs to
   * and queued it for an operator, or found it by lookup before it ever said not_done), and the
   * rest (`lateUndetected`: an object at the provider the system does not know about; effectd must
   * have none). A detected, queued late arrival is not counted in `duplicates`; 0 for other faults.
   */
  lateInjected: number;
  lateDetected: number;
  lateUndetected: number;
  missing: number;
  falseDedup: number;
  unresolved: number;
  escalations: number;
  timeInUnknownMs: number;
  /** Intents whose first answer came back, and how many of those were `unknown` (sagas: none counted). */
  firstAnswers: number;
  firstUnknown: number;
  wrongReceipt: number;
  latencyMs: { p50: number; p99: number };
  /** How many times the fault was really injected; 0 in a faulted cell means the cell proves nothing. */
  faultInjected: number;
  /** Saga workloads: how many times the failAt refusal was really answered (0 when the saga never reached that step). */
  refusals?: number;
  /** Saga workloads: how the saga ended (effectd's status, or the baseline script's account) and, in short, completed / failed / open. */
  sagaStatus?: string;
  sagaOutcome?: SagaRun['outcome'];
  /** Saga workloads: the "never" checks, from the providers' oracles only (see ground-truth.ts). */
  emailWithoutCharge?: number;
  leftInPlace?: number;
  /** Saga workloads: records left in place whose undo the system handed to a human (not a silent leftover). */
  leftWithHuman?: number;
  compensatedTwice?: number;
  phantomCompensations?: number;
  /** Agent-visible tool calls, and mutating requests the providers received. */
  toolCalls: number;
  providerRequests: number;
  elapsedMs: number;
  workflowId: string;
  intents: (IntentOutcome & { present: number; providerRecords: string[] })[];
  transcript: TranscriptEntry[];
  /** What happened around the cell worth knowing (which instance a Kafka rebalance killed…). */
  notes?: string[];
  /**
   * The longest stall of the benchmark's own event loop during the cell (ms). The simulated
   * providers run in that loop: a stall longer than a contract's margins (a late commit 620 ms
   * into a 1 s settle window) means a provider broke its contract's timing, and the cell's
   * verdict on effectd is not to be trusted either way.
   */
  benchStallMs?: number;
  /** LIMBO's measures of the cell (per-step workloads; limbo/limbo-measures.ts). */
  limbo?: LimboMeasures;
  /** Set when the cell itself broke (not the system under test): such a run proves nothing. */
  error?: string;
}

export const SAGA_CHECKS = ['emailWithoutCharge', 'leftInPlace', 'compensatedTwice', 'phantomCompensations'] as const satisfies readonly (keyof SagaTruth)[];

/** What effectd cells share across the run: the instances and the proxies (one per tool) their configuration points at. */
export type EffectdLane =
  | { kind: 'http'; name: string; fleet: EffectdFleet; proxies: Record<string, ProviderProxy> }
  | { kind: 'kafka'; name: string; pair: KafkaPair; proxies: Record<string, ProviderProxy> };

export interface CellOptions {
  /** Makes business identifiers unique to this run. */
  runTag: string;
  lane?: EffectdLane;
  /** Overrides the probability that the effectd model decides again on `unknown` (default per policy). */
  redecide?: number;
  cellDeadlineMs?: number;
}

/** Any agent waits at most this long per cell (effectd's crash cells need lease + settle window). */
export const CELL_DEADLINE_MS = 8_000;
/** A saga has up to four steps and as many compensations, each of which a fault may leave to the reconciler. */
export const SAGA_CELL_DEADLINE_MS = 12_000;
/** Over Kafka the group notices a SIGKILLed member only after its session timeout. */
export const KAFKA_CELL_DEADLINE_MS = 16_000;

/** The seeded pick of which request a saga cell's fault hits: a step before the refused one, or the compensation of one. */
export function sagaTargets(plan: SagaPlan, tag: string, failAt: string): { candidates: IntentSpec[]; sequence: IntentSpec[] } {
  const steps = plan.steps(tag);
  const at = failAt === 'none' ? steps.length : steps.findIndex((s) => s.id === failAt);
  if (at < 0) throw new CodedError('invalid_command', `saga ${plan.saga} has no step ${failAt}`);
  const before = steps.slice(0, at);
  const compensations = [...before].reverse().flatMap((s) => plan.compensation(tag, s.id, `<receipt of ${s.id}>`, {}) ?? []);
  // A saga whose first step is refused has nothing before it: the fault hits that step's first request.
  const candidates = at === 0 ? [steps[0]!] : failAt === 'none' ? steps : [...before, ...compensations];
  return { candidates, sequence: [...steps.slice(0, at + 1), ...compensations] };
}

/** Measures the longest event-loop stall while `work` runs: a 20 ms tick that comes late by that much. */
async function measuringStalls<T>(work: (stall: () => number) => Promise<T>): Promise<T> {
  let worst = 0;
  let expected = performance.now() + 20;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - expected);
    expected = now + 20;
  }, 20);
  try {
    return await work(() => Math.round(worst));
  } finally {
    clearInterval(timer);
  }
}

export async function runCell(spec: CellSpec, options: CellOptions): Promise<CellResult> {
  return measuringStalls(async (stall) => {
    const result = await runCellMeasured(spec, options);
    return { ...result, benchStallMs: stall() };
  });
}

async function runCellMeasured(spec: CellSpec, options: CellOptions): Promise<CellResult> {
  const startedAt = Date.now();
  const workload = findWorkload(spec.workload);
  if (!workload) throw new CodedError('invalid_command', `unknown workload ${spec.workload}`);
  const plan = workload.saga;
  const failAt = plan ? spec.failAt ?? 'none' : undefined;
  const effectdCell = isEffectd(spec.policy);
  const lane = effectdCell ? options.lane : undefined;
  if (effectdCell && !lane) throw new CodedError('internal', 'effectd cells need an effectd lane (instances and proxies)');
  const fault = faultSpec(spec.fault);
  const tag = `${options.runTag}c${spec.index}s${spec.seed}`.toLowerCase();
  const workflowId = `bench-${tag}`;
  const intents = workload.intents(tag);
  const cellRng = new Rng(spec.seed, `${spec.workload}/${spec.fault}${failAt ? `/${failAt}` : ''}`);
  const { candidates: all, sequence } = plan ? sagaTargets(plan, tag, failAt!) : { candidates: intents, sequence: intents };
  // A workload may aim its faults at the intents whose story it tells (charge-respelled: the first charge).
  const aimed = !plan && workload.faultTargets ? all.filter((intent) => workload.faultTargets!.includes(intent.id)) : all;
  const candidates = fault.targets ? aimed.filter((intent) => fault.targets!(intent)) : aimed;
  if (candidates.length === 0) throw new CodedError('invalid_command', `fault ${spec.fault} has no intent to hit in workload ${spec.workload}`);
  const { target, nth } = chooseTarget(candidates, cellRng.fork('target'), sequence);
  const retentionMs = fault.shortKeys ? BENCH_TIMINGS.shortRetentionMs : BENCH_TIMINGS.longRetentionMs;
  const deadline = startedAt + (options.cellDeadlineMs ?? (lane?.kind === 'kafka' ? KAFKA_CELL_DEADLINE_MS : plan ? SAGA_CELL_DEADLINE_MS : CELL_DEADLINE_MS));
  const notes: string[] = [];

  // Ids are stamped per cell, so a refund or a release names this cell's records and nothing else's.
  const idSeed = (spec.index + 1) * 1_000 + spec.seed;
  const providerSettings = fault.providerSettingsOf?.(cellRng.fork('provider-settings')) ?? fault.providerSettings;
  if (fault.providerSettingsOf) notes.push(`${spec.fault}: the ${benchTool(target.tool).provider} provider runs with ${JSON.stringify(providerSettings)} in this cell`);
  const providers = await CellProviders.start(workload.providers, idSeed, retentionMs, providerSettings ? { [benchTool(target.tool).provider]: providerSettings } : {});
  const ownProxies: ProviderProxy[] = [];
  let armedFault: ArmedFault | undefined;
  let made: MadePolicy | undefined;
  try {
    const proxies = new Map<string, ProviderProxy>();
    if (lane) {
      for (const tool of BENCH_TOOL_NAMES) {
        const proxy = lane.proxies[tool]!;
        const kind = benchTool(tool).provider;
        proxy.retarget(workload.providers.includes(kind) ? providers.url(kind) : undefined, [tag, CellProviders.idStamp(idSeed)]);
        proxies.set(tool, proxy);
      }
    } else {
      for (const tool of BENCH_TOOL_NAMES) {
        const kind = benchTool(tool).provider;
        if (!workload.providers.includes(kind)) continue;
        const proxy = await ProviderProxy.start();
        proxy.retarget(providers.url(kind));
        ownProxies.push(proxy);
        proxies.set(tool, proxy);
      }
    }
    if (plan && failAt !== 'none') {
      const step = intents.find((i) => i.id === failAt)!;
      const refusal = plan.refusals[failAt!]!;
      const route = benchTool(step.tool);
      await providers.armFaults(route.provider, [{ match: { method: 'POST', pathPrefix: route.mutationPath, times: 1_000 }, action: { type: 'status', status: refusal.status, body: refusal.body, afterExecutionBegan: refusal.afterExecutionBegan } }]);
      notes.push(`failAt ${failAt}: ${refusal.why}`);
    }

    const gate = new Gate();
    const send: Send = async (request: ExchangeRequest) => {
      await gate.pass(request.method);
      const result = await exchange(request);
      if (result.kind === 'not-sent' && !effectdCell) armedFault?.onProviderRefused();
      return result;
    };
    made = await makePolicy(spec, lane, fault.shortKeys === true, fault.needsSecondary === true, proxies, retentionMs, send, deadline, workflowId, notes);
    const { policy, effectd } = made;
    const profile = spec.policy === 'effectd+redecide' ? REDECIDING_PROFILE : profileFor(policy.obeysUnknown, effectdCell ? options.redecide : undefined);
    const agent = new ScriptedAgent(policy, cellRng.fork('agent'), profile, workflowId, deadline, startedAt, {
      beforeCall: (intent, n) => armedFault?.hooks.beforeCall?.(intent, n),
      afterCall: (intent, n, observation) => armedFault?.hooks.afterCall?.(intent, n, observation),
    });
    const harness = plan && effectdCell ? new EffectdSagaHarness(made.sagaIngress!(plan.saga), plan, tag, deadline, startedAt) : undefined;
    const faultAgent: FaultAgent = harness ?? agent;
    armedFault = await fault.arm({
      policy: spec.policy, target, targetNth: nth, providers, agent: faultAgent, stepCalls: harness === undefined, gate, effectd, rng: cellRng.fork('fault'), intents,
      proxy: (tool) => {
        const proxy = proxies.get(tool);
        if (!proxy) throw new CodedError('internal', `no proxy for ${tool} in this cell`);
        return proxy;
      },
    });

    let agentRun: AgentRun | undefined;
    let sagaRun: SagaRun | undefined;
    if (harness) sagaRun = await harness.run();
    else if (plan) sagaRun = await new BaselineSagaScript(agent, plan, tag).run();
    else agentRun = await agent.run(intents);
    await armedFault.finished();
    notes.push(...(armedFault.notes?.() ?? []));
    await Promise.all([...proxies.values()].map((p) => p.idle()));
    await providers.quiesce(3_000);
    const injected = await armedFault.injected() + gate.held;

    const oracles: Oracles = {};
    for (const kind of workload.providers) oracles[kind] = await providers.oracle(kind);
    const escalations = policy instanceof EffectdPolicy || policy instanceof KafkaEffectdPolicy || policy instanceof McpEffectdPolicy ? await policy.escalations(workflowId) : 0;
    if (made.mcpCalls) notes.push(`MCP: ${made.mcpCalls()} tools/call requests (JSON-RPC ids), re-issues included, for ${intents.length} intent(s)`);
    // What effectd reports as duplicates it detected, after its audit had time to run (only this fault's cells wait for it).
    const detected = made.duplicatesOf ? await made.duplicatesOf(fault.awaitsAuditMs ?? 0) : { count: 0, notes: [] };
    notes.push(...detected.notes);
    // Late arrivals: what the fault delivered late and the provider committed, against what effectd says of those effects.
    const recordsByIdentity = new Map(intents.map((intent) => [JSON.stringify(intent.identity), recordsOf(intent.identity, oracles)]));
    const deliveries = armedFault.lateDeliveries?.() ?? [];
    const lateRead = deliveries.length > 0 && made.lateArrivalsOf ? await made.lateArrivalsOf(deliveries, fault.awaitsAuditMs ?? 0) : undefined;
    const late = judgeLateArrivals(deliveries, lateRead?.effects ?? new Map(), recordsByIdentity, lateRead?.provenAbsent ?? new Set());
    notes.push(...(lateRead?.notes ?? []), ...late.notes);
    const common = {
      workload: spec.workload, fault: spec.fault, policy: spec.policy, seed: spec.seed,
      ...(failAt !== undefined ? { failAt } : {}),
      ...(effectdCell ? { ingress: lane!.kind } : {}),
      escalations,
      detectedDuplicates: detected.count,
      lateInjected: late.injected,
      lateDetected: late.detected,
      lateUndetected: late.undetected,
      faultInjected: spec.fault === 'none' ? 0 : injected,
      providerRequests: await providers.mutationRequests(),
      workflowId,
    };

    if (sagaRun) {
      for (const [name, reason] of Object.entries(sagaRun.reasons ?? {})) notes.push(`${name}: ${reason}`);
      const byId = new Map(sagaRun.outcomes.map((o) => [o.intentId, o]));
      const steps = intents.map((intent) => {
        const outcome = byId.get(intent.id) ?? { intentId: intent.id, status: 'not_done' as const, state: 'not started', steps: [], calls: 0, unknownMs: 0 };
        return { intent, outcome, records: recordsOf(intent.identity, oracles) };
      });
      const compensations = sagaRun.outcomes.filter((o) => o.intentId.startsWith('compensate:'));
      const score = scoreSaga(
        steps.map(({ outcome, records }) => ({ final: outcome.status, ...(outcome.receipt ? { receipt: outcome.receipt } : {}), present: records.length, knownReceipts: records.flatMap((r) => (r.receipts === 'none' ? [] : r.receipts)) })),
        compensations.map((c) => c.status),
      );
      const charge = intents.find((i) => i.id === plan!.chargeStep)!.identity as { invoiceId: string };
      const email = intents.find((i) => i.id === plan!.emailStep)!.identity as { to: string; template: string };
      const truth = sagaTruth(charge.invoiceId, email, sagaRun.outcome === 'failed', oracles, sagaRun.undoWithHuman);
      return {
        ...common, ...score,
        // A compensation effectd could not do is handed to a human, by its own account (compensation_failed).
        escalations: common.escalations + compensations.filter((c) => c.status === 'escalated' && !['escalated', 'terminal_failure'].includes(c.state ?? '')).length,
        timeInUnknownMs: sagaRun.unknownMs,
        firstAnswers: 0,
        firstUnknown: 0,
        latencyMs: latencySummary(sagaRun.latenciesMs),
        refusals: failAt === 'none' ? 0 : await providers.refusalsFired(),
        sagaStatus: sagaRun.status, sagaOutcome: sagaRun.outcome, ...truth,
        toolCalls: sagaRun.latenciesMs.length,
        elapsedMs: Date.now() - startedAt,
        intents: [
          ...steps.map(({ outcome, records }) => ({ ...outcome, present: records.length, providerRecords: records.map((r) => r.id) })),
          ...compensations.map((c) => ({ ...c, present: 0, providerRecords: [] })),
        ],
        transcript: sagaRun.transcript,
        ...(notes.length > 0 ? { notes } : {}),
      };
    }

    const run = agentRun!;
    // What effectd handed to a human, with the evidence it hands over (issue 5: "each with its evidence").
    for (const outcome of run.outcomes) {
      if (outcome.status !== 'escalated' || !outcome.effectId || !made.reasonOf) continue;
      notes.push(`${outcome.intentId}: ${outcome.state}: ${(await made.reasonOf(outcome.effectId).catch(() => undefined)) ?? 'effectd gave no reason'}`);
    }
    const evidence: IntentEvidence[] = [];
    const world = new Map<string, IdentityEvidence>();
    const intentsOut: CellResult['intents'] = [];
    for (const [i, intent] of intents.entries()) {
      const outcome = run.outcomes[i]!;
      const identity = JSON.stringify(intent.identity);
      const records = recordsByIdentity.get(identity)!;
      world.set(identity, {
        present: records.length,
        knownReceipts: records.some((r) => r.receipts === 'none') ? 'unchecked' : records.flatMap((r) => (r.receipts === 'none' ? [] : r.receipts)),
        lateQueued: late.queuedByIdentity.get(identity) ?? 0,
      });
      evidence.push({ intentId: intent.id, identity, multiplicity: intent.multiplicity, repeat: intent.repeat !== undefined, final: outcome.status, ...(outcome.receipt ? { receipt: outcome.receipt } : {}) });
      intentsOut.push({ ...outcome, present: records.length, providerRecords: records.map((r) => r.id) });
    }
    // Issue 32: what the provider charged on the invoice of a charge the model decided again with its amount respelled (a copied reading is 100×).
    for (const intent of intents.filter((i) => i.redecideRespelled && i.identity.kind === 'charge')) {
      const invoiceId = (intent.identity as { invoiceId: string }).invoiceId;
      const amounts = chargedAmounts(invoiceId, oracles);
      notes.push(`${intent.id}: the provider holds ${amounts.length} charge(s) of invoice ${invoiceId}, in minor units: ${amounts.join(', ') || 'none'} (each intent meant ${String(intent.args.amount)})`);
    }
    const score = scoreCell(evidence, (identity) => world.get(identity)!);
    const limbo = limboMeasures(evidence, (identity) => world.get(identity)!.present, collateralWrites(oracles, intents.map((i) => i.identity)));
    return {
      ...common, ...score, limbo,
      timeInUnknownMs: run.outcomes.reduce((sum, o) => sum + o.unknownMs, 0),
      firstAnswers: run.outcomes.filter((o) => o.firstAnswer !== undefined).length,
      firstUnknown: run.outcomes.filter((o) => o.firstAnswer === 'unknown').length,
      latencyMs: latencySummary(run.latenciesMs),
      toolCalls: run.latenciesMs.length,
      elapsedMs: Date.now() - startedAt,
      intents: intentsOut,
      transcript: run.transcript,
      ...(notes.length > 0 ? { notes } : {}),
    };
  } finally {
    await armedFault?.finished().catch(() => undefined);
    await made?.close?.().catch(() => undefined);
    if (lane) for (const proxy of Object.values(lane.proxies)) {
      await proxy.up();
      proxy.retarget(undefined);
    }
    await Promise.all(ownProxies.map((p) => p.close()));
    await providers.close();
  }
}

interface MadePolicy {
  policy: Policy;
  /** effectd's reason and evidence for one of its effects (GET /v1/effects/:id). */
  reasonOf?(effectId: string): Promise<string | undefined>;
  effectd?: EffectdControls;
  /** How effectd's saga harness starts and reads a saga in this lane. */
  sagaIngress?(saga: string): SagaIngress;
  /** The duplicates effectd detected in this cell's workflow, waiting at most `waitMs` for audits still due. */
  duplicatesOf?(waitMs: number): Promise<DetectedDuplicates>;
  /** What effectd says about the effects late requests belong to, waiting at most `waitMs` for its absence audits. */
  lateArrivalsOf?(deliveries: LateDelivery[], waitMs: number): Promise<{ effects: Map<string, LateEffectView>; provenAbsent: Set<string>; notes: string[] }>;
  /** MCP lane: the tools/call requests the agent's client made (re-issues included). */
  mcpCalls?(): number;
  /** What the policy opened for the cell (an MCP client, an upstream MCP server), closed when the cell ends. */
  close?(): Promise<void>;
}

async function makePolicy(
  spec: CellSpec, lane: EffectdLane | undefined, shortKeys: boolean, needsSecondary: boolean, proxies: Map<string, ProviderProxy>,
  retentionMs: number, send: Send, deadline: number, workflowId: string, notes: string[],
): Promise<MadePolicy> {
  const rng = new Rng(spec.seed, `${spec.workload}/${spec.fault}/${spec.policy}/keys`);
  if (!lane) {
    // Tools this workload does not use get an address nothing listens on.
    const urls = Object.fromEntries(BENCH_TOOL_NAMES.map((tool) => [tool, proxies.get(tool)?.url ?? 'http://127.0.0.1:9']));
    const tools = baselineTools(urls, retentionMs);
    switch (spec.policy) {
      case 'blind':
        return { policy: new BlindPolicy(tools, send, rng) };
      case 'sdk-retry':
        return { policy: new SdkRetryPolicy(tools, send, rng) };
      case 'native-or-never':
        return { policy: new NativeOrNeverPolicy(tools, send) };
      case 'mcp-direct': {
        // The upstream MCP server around this cell's providers, reached through the cell's proxies (and faults).
        const upstream = await startBenchUpstreamMcp(tools, BENCH_TOOL_NAMES.filter((t) => proxies.has(t)), send);
        const direct = new McpDirectPolicy(upstream);
        return { policy: direct, mcpCalls: () => direct.link.calls, close: async () => { await direct.link.close(); await upstream.close(); } };
      }
      default:
        throw new CodedError('internal', `${spec.policy} cells need an effectd lane`);
    }
  }
  if (lane.kind === 'kafka') {
    const pair = lane.pair;
    const policy = new KafkaEffectdPolicy(pair.client, () => pair.endpoint(), send, deadline);
    return {
      policy,
      effectd: {
        kill: () => Promise.reject(new Error('the Kafka lane only runs rebalance cells')),
        restart: () => Promise.resolve(),
        rebalance: async () => {
          const killed = await pair.killPartitionHolder(workflowId);
          notes.push(killed ? `rebalance: SIGKILLed effectd ${killed.killed}, which held partition ${killed.partition} of workflow ${workflowId} with the dispatch in flight; the group moves the partition, the victim is started again` : 'rebalance: no live instance held the workflow\'s partition at that moment');
          return killed !== undefined;
        },
        movesAgent: false,
        settled: () => pair.settled(),
      },
      sagaIngress: (saga) => new KafkaSagaIngress(pair, send, saga, workflowId, deadline),
      reasonOf: (effectId) => effectReason(pair.endpoint(), send, effectId),
      duplicatesOf: (waitMs) => detectedDuplicates(() => pair.endpoint(), send, workflowId, waitMs),
      lateArrivalsOf: (deliveries, waitMs) => readLateArrivals(apiGetter(() => pair.endpoint(), send), workflowId, deliveries, waitMs),
    };
  }
  const fleet = lane.fleet;
  const serving: EffectdProcess = shortKeys ? await fleet.shortKeys() : fleet.primary;
  if (!serving.running) await serving.start();
  const secondary = needsSecondary ? await fleet.secondary() : undefined;
  const policy = new EffectdPolicy(() => serving.endpoint, send, deadline, { answerAtOnce: spec.policy === 'effectd+redecide' });
  const mcp = spec.policy === 'effectd-mcp' ? new McpEffectdPolicy(() => serving.endpoint, policy, deadline) : undefined;
  let ingress: HttpSagaIngress | undefined;
  return {
    policy: mcp ?? policy,
    ...(mcp ? { mcpCalls: () => mcp.link.calls, close: () => mcp.link.close() } : {}),
    effectd: {
      kill: () => serving.kill(),
      restart: async () => {
        await serving.start();
      },
      rebalance: async () => {
        if (!secondary) return false;
        policy.moveTo(() => secondary.endpoint);
        ingress?.moveTo(() => secondary.endpoint);
        return true;
      },
      movesAgent: true,
      settled: async () => undefined,
    },
    sagaIngress: (saga) => {
      ingress = new HttpSagaIngress(() => serving.endpoint, send, saga, workflowId, deadline);
      return ingress;
    },
    reasonOf: (effectId) => effectReason(policy.endpoint(), send, effectId),
    duplicatesOf: (waitMs) => detectedDuplicates(() => policy.endpoint(), send, workflowId, waitMs),
    lateArrivalsOf: (deliveries, waitMs) => readLateArrivals(apiGetter(() => policy.endpoint(), send), workflowId, deliveries, waitMs),
  };
}

/** A GET on effectd's API as an operator reads it (the agent credential sees its own workflows): the body of a 200, else undefined. */
function apiGetter(endpoint: () => EffectdEndpoint, send: Send): (path: string) => Promise<unknown> {
  return async (path) => {
    const at = endpoint();
    const result = await send({ method: 'GET', url: `${at.url}${path}`, headers: headers(at, false), timeoutMs: 5_000 });
    return result.kind === 'response' && result.status === 200 ? result.body : undefined;
  };
}

export interface DetectedDuplicates {
  /** Extra objects effectd reported: for each effect with `duplicates`, its receipts beyond its own. */
  count: number;
  /** One line per detected duplicate (and per audit still not done when the wait ended), for the cell's notes. */
  notes: string[];
}

interface WorkflowBody {
  effects?: { effectId: string; step?: string; state?: string; attempts?: number }[];
  timeline?: { type: string; effectId?: string }[];
}

/**
 * The duplicates effectd reports for a workflow, as an operator reads them: an effect that settled
 * through a same-key resend is audited a settle window after its last attempt (DuplicateDetected or
 * ResendAudited in the workflow's timeline); this waits at most `waitMs` for audits still due, then
 * reads the `duplicates` of each effect found duplicated (GET /v1/effects/:id).
 */
async function detectedDuplicates(endpoint: () => EffectdEndpoint, send: Send, workflowId: string, waitMs: number): Promise<DetectedDuplicates> {
  const until = Date.now() + waitMs;
  const get = apiGetter(endpoint, send);
  for (;;) {
    const workflow = (await get(`/v1/workflows/${encodeURIComponent(workflowId)}`)) as WorkflowBody | undefined;
    const timeline = workflow?.timeline ?? [];
    const audited = new Set(timeline.filter((t) => t.type === 'DuplicateDetected' || t.type === 'ResendAudited').map((t) => t.effectId));
    const due = (workflow?.effects ?? []).filter((e) => e.state === 'committed' && (e.attempts ?? 0) > 1 && !audited.has(e.effectId));
    if (workflow && due.length > 0 && Date.now() < until) {
      await sleep(100);
      continue;
    }
    const notes = waitMs === 0 ? [] : due.map((e) => `${e.step ?? e.effectId}: settled through a resend, not yet audited by effectd when the benchmark stopped waiting (${waitMs} ms)`);
    if (!workflow) return { count: 0, notes: waitMs > 0 ? [`effectd's duplicates could not be read: GET /v1/workflows/${workflowId} did not answer 200`] : [] };
    let count = 0;
    for (const effectId of new Set(timeline.filter((t) => t.type === 'DuplicateDetected').map((t) => t.effectId!))) {
      const effect = (await get(`/v1/effects/${encodeURIComponent(effectId)}`)) as { step?: string; duplicates?: { receipts: string[]; own?: string; unhandled: string[]; undoTool?: string } } | undefined;
      const duplicates = effect?.duplicates;
      if (!duplicates) continue;
      const extra = duplicates.receipts.filter((r) => r !== duplicates.own);
      count += extra.length;
      notes.push(`${effect.step ?? effectId}: effectd detected a duplicate at the provider: ${duplicates.receipts.join(', ')} (its own ${duplicates.own ?? '?'}); ${duplicates.unhandled.length} extra object(s) queued for an operator${duplicates.undoTool ? ` with ${duplicates.undoTool} on offer` : ''}`);
    }
    return { count, notes };
  }
}

/** A saga started by an effect command on Kafka (tool `saga:<name>`, args = its input), watched over HTTP. */
class KafkaSagaIngress implements SagaIngress {
  constructor(private readonly pair: KafkaPair, private readonly send: Send, private readonly saga: string, private readonly workflowId: string, private readonly deadline: number) {}

  async start(input: Record<string, unknown>): Promise<StartAnswer> {
    const answer = await this.pair.client.submit({ workflowId: this.workflowId, step: 'saga', tool: `saga:${this.saga}`, args: input as never, principal: 'bench-agent' }, { timeoutMs: Math.max(100, Math.min(KAFKA_ANSWER_MS, this.deadline - Date.now())) });
    if (answer.error?.code === 'intent_conflict') return { kind: 'conflict', text: answer.message };
    if (answer.error) throw new CodedError('internal', `effectd refused the saga command: ${answer.error.code}: ${answer.error.message}`);
    if (answer.noAnswer) return { kind: 'none', why: answer.message };
    const view = await this.read();
    return view ? { kind: 'view', view } : { kind: 'none', why: 'answered, but the saga could not be read' };
  }

  read() {
    return readSaga(this.pair.endpoint(), this.send, this.workflowId);
  }

  reason(effectId: string) {
    return effectReason(this.pair.endpoint(), this.send, effectId);
  }
}

export type { ProviderKind };
