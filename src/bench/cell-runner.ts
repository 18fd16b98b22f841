import { BENCH_TIMINGS, baselineTools } from './bench-config.js';
import { exchange, type ExchangeRequest } from './bench-http.js';
import { CellProviders } from './cell-providers.js';
import type { EffectdFleet, EffectdProcess } from './effectd-fleet.js';
import { chooseTarget, FAULT_SPECS, type ArmedFault, type EffectdControls } from './faults.js';
import { Gate } from './gate.js';
import { recordsOf, type Oracles } from './ground-truth.js';
import type { FaultName, PolicyName } from './names.js';
import { BlindPolicy } from './policies/blind.js';
import { EffectdPolicy } from './policies/effectd.js';
import { NativeOrNeverPolicy } from './policies/native-or-never.js';
import type { Policy, Send } from './policies/policy.js';
import { SdkRetryPolicy } from './policies/sdk-retry.js';
import { ProviderProxy } from './provider-proxy.js';
import { Rng } from './rng.js';
import { latencySummary, scoreCell, type IdentityEvidence, type IntentEvidence } from './scoring.js';
import { profileFor, ScriptedAgent, type IntentOutcome, type TranscriptEntry } from './scripted-agent.js';
import { workload as findWorkload, type ProviderKind } from './workloads.js';

export interface CellSpec {
  index: number;
  workload: string;
  fault: FaultName;
  policy: PolicyName;
  seed: number;
}

/** One cell's result, as written to the JSON file (one object per cell). */
export interface CellResult {
  workload: string;
  fault: FaultName;
  policy: PolicyName;
  seed: number;
  declared: number;
  duplicates: number;
  missing: number;
  falseDedup: number;
  unresolved: number;
  escalations: number;
  timeInUnknownMs: number;
  wrongReceipt: number;
  latencyMs: { p50: number; p99: number };
  /** How many times the fault was really injected; 0 in a faulted cell means the cell proves nothing. */
  faultInjected: number;
  /** Agent-visible tool calls, and mutating requests the providers received. */
  toolCalls: number;
  providerRequests: number;
  elapsedMs: number;
  workflowId: string;
  intents: (IntentOutcome & { present: number; providerRecords: string[] })[];
  transcript: TranscriptEntry[];
  /** Set when the cell itself broke (not the system under test): such a run proves nothing. */
  error?: string;
}

/** What effectd cells share across the run: the fleet and the proxies its configuration points at. */
export interface EffectdLane {
  fleet: EffectdFleet;
  proxies: Record<ProviderKind, ProviderProxy>;
}

export interface CellOptions {
  /** Makes business identifiers unique to this run. */
  runTag: string;
  lane?: EffectdLane;
  /** Overrides the probability that the model decides again on `unknown` (default per policy). */
  redecide?: number;
  cellDeadlineMs?: number;
}

const KINDS: ProviderKind[] = ['payments', 'email', 'cloud', 'weak'];
/** Any agent waits at most this long per cell (effectd's crash cells need lease + settle window). */
export const CELL_DEADLINE_MS = 8_000;

export async function runCell(spec: CellSpec, options: CellOptions): Promise<CellResult> {
  const startedAt = Date.now();
  const workload = findWorkload(spec.workload);
  if (!workload) throw new Error(`unknown workload ${spec.workload}`);
  const fault = FAULT_SPECS[spec.fault];
  const tag = `${options.runTag}c${spec.index}s${spec.seed}`.toLowerCase();
  const workflowId = `bench-${tag}`;
  const intents = workload.intents(tag);
  const cellRng = new Rng(spec.seed, `${spec.workload}/${spec.fault}`);
  const { target, nth } = chooseTarget(intents, cellRng.fork('target'));
  const retentionMs = fault.shortKeys ? BENCH_TIMINGS.shortRetentionMs : BENCH_TIMINGS.longRetentionMs;
  const deadline = startedAt + (options.cellDeadlineMs ?? CELL_DEADLINE_MS);

  const providers = await CellProviders.start(workload.providers, spec.seed, retentionMs);
  const ownProxies = new Map<ProviderKind, ProviderProxy>();
  let armedFault: ArmedFault | undefined;
  try {
    const proxies = new Map<ProviderKind, ProviderProxy>();
    if (spec.policy === 'effectd') {
      if (!options.lane) throw new Error('effectd cells need the effectd lane (fleet and proxies)');
      for (const kind of KINDS) {
        const proxy = options.lane.proxies[kind];
        proxy.retarget(workload.providers.includes(kind) ? providers.url(kind) : undefined, tag);
        proxies.set(kind, proxy);
      }
    } else {
      for (const kind of workload.providers) {
        const proxy = await ProviderProxy.start();
        proxy.retarget(providers.url(kind));
        ownProxies.set(kind, proxy);
        proxies.set(kind, proxy);
      }
    }

    const gate = new Gate();
    const send: Send = async (request: ExchangeRequest) => {
      await gate.pass(request.method);
      const result = await exchange(request);
      if (result.kind === 'not-sent' && spec.policy !== 'effectd') armedFault?.onProviderRefused();
      return result;
    };
    const { policy, effectd } = await makePolicy(spec, options, fault.shortKeys === true, fault.needsSecondary === true, proxies, retentionMs, send, deadline);
    const agent = new ScriptedAgent(policy, cellRng.fork('agent'), profileFor(policy.obeysUnknown, options.redecide), workflowId, deadline, startedAt, {
      beforeCall: (intent, n) => armedFault?.hooks.beforeCall?.(intent, n),
      afterCall: (intent, n, observation) => armedFault?.hooks.afterCall?.(intent, n, observation),
    });
    armedFault = await fault.arm({
      policy: spec.policy, target, targetNth: nth, providers, agent, gate, effectd,
      proxy: (kind) => {
        const proxy = proxies.get(kind);
        if (!proxy) throw new Error(`no proxy for ${kind} in this cell`);
        return proxy;
      },
    });

    const run = await agent.run(intents);
    await armedFault.finished();
    await Promise.all([...proxies.values()].map((p) => p.idle()));
    await providers.quiesce(3_000);
    const injected = await armedFault.injected() + gate.held;

    const oracles: Oracles = {};
    for (const kind of workload.providers) oracles[kind] = await providers.oracle(kind);
    const evidence: IntentEvidence[] = [];
    const world = new Map<string, IdentityEvidence>();
    const intentsOut: CellResult['intents'] = [];
    for (const [i, intent] of intents.entries()) {
      const outcome = run.outcomes[i]!;
      const identity = JSON.stringify(intent.identity);
      const records = recordsOf(intent.identity, oracles);
      world.set(identity, {
        present: records.length,
        knownReceipts: records.some((r) => r.receipts === 'none') ? 'unchecked' : records.flatMap((r) => (r.receipts === 'none' ? [] : r.receipts)),
      });
      evidence.push({ intentId: intent.id, identity, multiplicity: intent.multiplicity, repeat: intent.repeat !== undefined, final: outcome.status, ...(outcome.receipt ? { receipt: outcome.receipt } : {}) });
      intentsOut.push({ ...outcome, present: records.length, providerRecords: records.map((r) => r.id) });
    }
    const score = scoreCell(evidence, (identity) => world.get(identity)!);
    return {
      workload: spec.workload, fault: spec.fault, policy: spec.policy, seed: spec.seed,
      ...score,
      escalations: policy instanceof EffectdPolicy ? await policy.escalations(workflowId) : 0,
      timeInUnknownMs: run.outcomes.reduce((sum, o) => sum + o.unknownMs, 0),
      latencyMs: latencySummary(run.latenciesMs),
      faultInjected: spec.fault === 'none' ? 0 : injected,
      toolCalls: run.latenciesMs.length,
      providerRequests: await providers.mutationRequests(),
      elapsedMs: Date.now() - startedAt,
      workflowId,
      intents: intentsOut,
      transcript: run.transcript,
    };
  } finally {
    await armedFault?.finished().catch(() => undefined);
    if (options.lane) for (const proxy of Object.values(options.lane.proxies)) {
      await proxy.up();
      proxy.retarget(undefined);
    }
    await Promise.all([...ownProxies.values()].map((p) => p.close()));
    await providers.close();
  }
}

async function makePolicy(
  spec: CellSpec, options: CellOptions, shortKeys: boolean, needsSecondary: boolean, proxies: Map<ProviderKind, ProviderProxy>,
  retentionMs: number, send: Send, deadline: number,
): Promise<{ policy: Policy; effectd?: EffectdControls }> {
  const rng = new Rng(spec.seed, `${spec.workload}/${spec.fault}/${spec.policy}/keys`);
  if (spec.policy !== 'effectd') {
    // Providers this workload does not use get an address nothing listens on.
    const urls = Object.fromEntries(KINDS.map((k) => [k, proxies.get(k)?.url ?? 'http://127.0.0.1:9'])) as Record<ProviderKind, string>;
    const tools = baselineTools(urls, retentionMs);
    switch (spec.policy) {
      case 'blind':
        return { policy: new BlindPolicy(tools, send, rng) };
      case 'sdk-retry':
        return { policy: new SdkRetryPolicy(tools, send, rng) };
      case 'native-or-never':
        return { policy: new NativeOrNeverPolicy(tools, send) };
    }
  }
  const fleet = options.lane!.fleet;
  const serving: EffectdProcess = shortKeys ? await fleet.shortKeys() : fleet.primary;
  if (!serving.running) await serving.start();
  const secondary = needsSecondary ? await fleet.secondary() : undefined;
  const policy = new EffectdPolicy(() => serving.endpoint, send, deadline);
  return {
    policy,
    effectd: {
      kill: () => serving.kill(),
      restart: async () => {
        await serving.start();
      },
      moveToSecondary: () => {
        if (secondary) policy.moveTo(() => secondary.endpoint);
      },
    },
  };
}

