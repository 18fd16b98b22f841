import type { FaultRule } from '@effectd/simulators';
import { BENCH_TIMINGS, benchTool, keylessConsistentTools } from './bench-config.js';
import type { CellProviders } from './cell-providers.js';
import type { Gate } from './gate.js';
import { isEffectd, type BenchPolicy, type DesignFaultName, type FaultName } from './names.js';
import type { Observation } from './policies/policy.js';
import type { LateDelivery, ProviderProxy } from './provider-proxy.js';
import type { Rng } from './rng.js';
import type { AgentHooks } from './scripted-agent.js';
import type { IntentSpec, Workload } from './workloads.js';

/** What a fault can reach around effectd: its processes and where the agent's harness sends commands. */
export interface EffectdControls {
  /** SIGKILL the instance serving the workflow; `restart` starts it again on the same data dir. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  /**
   * The workflow moves to another instance. Over HTTP the harness turns to the second instance on
   * the same ledger; over Kafka the instance that holds the workflow's partition is SIGKILLed and
   * the group hands the partition to the other one. Resolves to true when the move happened.
   */
  rebalance(): Promise<boolean>;
  /** Whether the agent's harness moves with the workflow (HTTP: it does; Kafka: its client stays, the group moves). */
  readonly movesAgent: boolean;
  /** Background work a fault started (an instance started again after a SIGKILL), to finish before the cell is scored. */
  settled(): Promise<void>;
}

/** What a fault does to the agent's side: the scripted agent, a baseline's saga script, effectd's saga harness. */
export interface FaultAgent {
  crash(): void;
  moveWorkflow(): void;
  /** Gives up on the call in flight for `intentId` (any call, for a harness that makes one call for a whole saga). */
  cancel(intentId: string): boolean;
  driftOnRepair(intentId: string): void;
  /** On the intent's first `unknown`, a model that repairs at all repeats the same step (a resubmission, not a new decision). */
  repeatOnUnknown?(intentId: string): void;
  /** effectd's saga harness: whether effectd's ledger says this step was never sent (a refused connection). */
  neverSent?(intentId: string): boolean;
  /**
   * duplicate-delivery: the intent's first call is delivered twice (a queue's redelivery, a
   * retransmitted message): the same call again once the first has answered; `delivered` runs then.
   */
  redeliver?(intentId: string, delivered: () => void): void;
}

export interface FaultContext {
  policy: BenchPolicy;
  target: IntentSpec;
  /** The target's first mutating request is this one among the cell's requests with the target's tool. */
  targetNth: number;
  providers: CellProviders;
  /** The proxy in front of one tool's provider. */
  proxy(tool: string): ProviderProxy;
  agent: FaultAgent;
  /**
   * Whether the agent calls each step itself (agent hooks fire around every call). False for a
   * saga effectd runs: the agent starts it with one call, so faults aim at the steps' requests.
   */
  stepCalls: boolean;
  gate: Gate;
  effectd?: EffectdControls;
  /** The cell's seeded randomness for the fault's own draws (a late commit's delay). */
  rng: Rng;
  /** Every intent of the cell's workload, in order (a batch fault hits several). */
  intents: IntentSpec[];
}

/** An armed fault: hooks into the agent's calls, evidence that it fired, and work to wait for. */
export interface ArmedFault {
  hooks: AgentHooks;
  /** A baseline's request to a provider was refused at connect time (before-dispatch evidence). */
  onProviderRefused(): void;
  /** Times the fault was injected (provider rules, proxy rules, cancels, pauses): 0 means it never fired. */
  injected(): Promise<number>;
  /** Background work (an effectd restart) to finish before the cell is scored. */
  finished(): Promise<void>;
  /** late-delivery: the requests the fault delivered to the provider late, with the provider's answer. */
  lateDeliveries?(): LateDelivery[];
  /** What the fault drew for this cell (a late commit's delay, a read lag), for the cell's notes. */
  notes?(): string[];
}

export interface FaultSpec {
  name: FaultName;
  /** docs/design.md's boundary, in a line. */
  boundary: string;
  /** key-expired cells run with a short key retention on both sides. */
  shortKeys?: boolean;
  /** rebalance cells need a second effectd instance on the same ledger. */
  needsSecondary?: boolean;
  /**
   * The intents the fault can hit (default: any). A workload with none of them, or a saga when
   * `sagas` is false, does not run the fault: its cells would prove nothing.
   */
  targets?(intent: IntentSpec): boolean;
  sagas?: boolean;
  /**
   * The target's provider breaks its contract: its simulator runs with these settings instead of
   * the ones that match the contract, which stays as declared for effectd and the baselines.
   */
  providerSettings?: Record<string, unknown>;
  /** Like `providerSettings`, drawn per cell (a lag between two bounds). */
  providerSettingsOf?(rng: Rng): Record<string, unknown>;
  /**
   * effectd cells wait at most this long (ms) after the agent is done for effectd's audits — the
   * duplicate audit of effects that settled through a resend, the absence audit of effects proven
   * absent — before the cell is scored.
   */
  awaitsAuditMs?: number;
  arm(context: FaultContext): Promise<ArmedFault>;
}

type RuleAction = FaultRule['action'];

/** Arms one provider-side rule on the target's mutating request (before the cell's other rules); the rest is the ArmedFault's default. */
export async function providerRule(context: FaultContext, action: RuleAction, extra: Partial<ArmedFault> = {}): Promise<ArmedFault> {
  const route = benchTool(context.target.tool);
  await context.providers.armFaults(route.provider, [{ match: { method: 'POST', pathPrefix: route.mutationPath, nth: context.targetNth, times: 1 }, action }], 'first');
  const base = armed(extra);
  return {
    ...base,
    injected: async () => (await context.providers.faultsFired()) + (await base.injected()),
  };
}

export function armed(extra: Partial<ArmedFault> = {}): ArmedFault {
  return {
    hooks: {},
    onProviderRefused: () => undefined,
    injected: async () => 0,
    finished: async () => undefined,
    ...extra,
  };
}

const isTarget = (context: FaultContext, intent: IntentSpec, callNumber: number) => intent.id === context.target.id && callNumber === 1;

/** SIGKILL effectd (restarting it in the background), or crash a baseline's agent process. */
function crasher(context: FaultContext): { crash: () => Promise<void>; restarted: () => Promise<void> } {
  let restarting: Promise<unknown> = Promise.resolve();
  let failure: unknown;
  return {
    crash: async () => {
      if (context.effectd) {
        await context.effectd.kill();
        restarting = context.effectd.restart().catch((error: unknown) => {
          failure = error;
        });
      } else {
        context.agent.crash();
      }
    },
    restarted: async () => {
      await restarting;
      if (failure !== undefined) throw failure;
    },
  };
}

async function proxyCrash(context: FaultContext, action: 'crash-before-forward' | 'crash-after-response'): Promise<ArmedFault> {
  const route = benchTool(context.target.tool);
  const proxy = context.proxy(context.target.tool);
  const { crash, restarted } = crasher(context);
  proxy.arm({ pathPrefix: route.mutationPath, nth: context.targetNth, action, hook: crash });
  return armed({ injected: async () => proxy.stats().fired, finished: restarted });
}

export const FAULT_SPECS: Record<DesignFaultName, FaultSpec> = {
  'before-dispatch': {
    name: 'before-dispatch',
    boundary: 'the provider is unreachable: the first attempt is refused at connect time, nothing was sent',
    async arm(context) {
      const proxy = context.proxy(context.target.tool);
      let refused = 0;
      const back = () => proxy.up();
      if (!context.stepCalls) {
        // effectd runs the saga: the tool's provider is unreachable from the start (no other step
        // uses this tool) for an outage that ends, as outages do. A forward step refused is the
        // saga's proven failure; a refused compensation is sent again after a backoff and meets
        // the provider back. effectd's ledger shows each refused connection as "never sent".
        await proxy.down();
        const outage = setTimeout(() => void back(), BENCH_TIMINGS.sagaOutageMs);
        return armed({ injected: async () => (context.agent.neverSent?.(context.target.id) ? 1 : 0), finished: async () => { clearTimeout(outage); await back(); } });
      }
      return armed({
        hooks: {
          beforeCall: async (intent, n) => {
            if (isTarget(context, intent, n)) await proxy.down();
          },
          afterCall: async (intent, n, observation: Observation) => {
            if (!isTarget(context, intent, n)) return;
            // effectd says it never sent the request; its ledger is the evidence.
            if (isEffectd(context.policy) && observation.kind === 'not_done' && /never sent/.test(observation.text)) refused += 1;
            await back();
          },
        },
        onProviderRefused: () => {
          refused += 1;
          void back();
        },
        injected: async () => refused,
        finished: back,
      });
    },
  },
  'before-mutation': {
    name: 'before-mutation',
    boundary: 'the provider received the request and drops the connection before it mutates anything',
    arm: (context) => providerRule(context, { type: 'drop-before-mutation' }),
  },
  'after-mutation': {
    name: 'after-mutation',
    boundary: 'the provider commits, then drops the connection before responding (post-commit response loss)',
    arm: (context) => providerRule(context, { type: 'drop-after-mutation' }),
  },
  'before-record': {
    name: 'before-record',
    boundary: 'the response reaches the caller, which is SIGKILLed before it records it',
    arm: (context) => proxyCrash(context, 'crash-after-response'),
  },
  cancel: {
    name: 'cancel',
    boundary: 'the caller gives up mid-request while the provider still completes it',
    async arm(context) {
      let cancelled = 0;
      if (!context.stepCalls) {
        // The agent gives up on its one call (the saga start) while the target step is at the provider.
        const route = benchTool(context.target.tool);
        context.proxy(context.target.tool).arm({
          pathPrefix: route.mutationPath, nth: context.targetNth, action: 'notify-on-forward',
          hook: () => {
            setTimeout(() => {
              if (context.agent.cancel(context.target.id)) cancelled += 1;
            }, BENCH_TIMINGS.cancelAfterMs);
          },
        });
        return providerRule(context, { type: 'delay', ms: BENCH_TIMINGS.providerDelayMs }, { injected: async () => cancelled });
      }
      return providerRule(context, { type: 'delay', ms: BENCH_TIMINGS.providerDelayMs }, {
        hooks: {
          beforeCall: (intent, n) => {
            if (!isTarget(context, intent, n)) return;
            setTimeout(() => {
              if (context.agent.cancel(intent.id)) cancelled += 1;
            }, BENCH_TIMINGS.cancelAfterMs);
          },
        },
        injected: async () => cancelled,
      });
    },
  },
  'late-commit': {
    name: 'late-commit',
    boundary: `the provider commits ${BENCH_TIMINGS.lateCommitMs} ms after receipt, after the caller's ${BENCH_TIMINGS.timeoutMs} ms timeout`,
    arm: (context) => providerRule(context, { type: 'late-commit', commitAfterMs: BENCH_TIMINGS.lateCommitMs }),
  },
  'crash-restart': {
    name: 'crash-restart',
    boundary: 'the caller (effectd) is SIGKILLed with the request in flight, and started again on the same data',
    arm: (context) => proxyCrash(context, 'crash-before-forward'),
  },
  rebalance: {
    name: 'rebalance',
    boundary: 'the workflow moves to another instance while its request is in flight (effectd: the Kafka consumer holding its partition is SIGKILLed; without Kafka, a second instance on the same ledger)',
    needsSecondary: true,
    async arm(context) {
      const route = benchTool(context.target.tool);
      const proxy = context.proxy(context.target.tool);
      let moved = 0;
      let failure: unknown;
      proxy.arm({
        pathPrefix: route.mutationPath, nth: context.targetNth, action: 'notify-on-forward',
        hook: async () => {
          try {
            if (context.effectd && !(await context.effectd.rebalance())) return;
          } catch (error) {
            failure = error;
            return;
          }
          moved += 1;
          if (!context.effectd || context.effectd.movesAgent) context.agent.moveWorkflow();
        },
      });
      return providerRule(context, { type: 'delay', ms: BENCH_TIMINGS.providerDelayMs }, {
        injected: async () => moved,
        finished: async () => {
          await context.effectd?.settled();
          if (failure !== undefined) throw failure;
        },
      });
    },
  },
  'key-expired': {
    name: 'key-expired',
    boundary: `the reply is lost and the retry comes after the key's retention (${BENCH_TIMINGS.shortRetentionMs} ms on both sides) has passed`,
    shortKeys: true,
    async arm(context) {
      return providerRule(context, { type: 'drop-after-mutation' }, {
        hooks: {
          beforeCall: (intent, n) => {
            // The agent's resubmission waits past the key's retention (a saga's steps are resubmitted by effectd itself).
            if (isTarget(context, intent, n)) context.gate.armAfterFirst(Date.now() + BENCH_TIMINGS.shortRetentionMs + 200);
          },
        },
      });
    },
  },
  'param-drift': {
    name: 'param-drift',
    boundary: 'the reply is lost and the model changes or rewords one parameter in its repair attempt',
    async arm(context) {
      context.agent.driftOnRepair(context.target.id);
      return providerRule(context, { type: 'drop-after-mutation' });
    },
  },
  'stored-failure': {
    name: 'stored-failure',
    boundary: 'execution begins, nothing is charged, and it fails with a first-hand 500 that a Stripe-like provider stores under the key: v1 replays it to every same-key retry (the key is poisoned: a human), v2 executes the request again',
    // A `status` fault with afterExecutionBegan: payments (v1) and travel freeze it under the key,
    // payments v2 keeps it as a failure to execute again, the other providers release the key.
    arm: (context) => providerRule(context, { type: 'status', status: 500, afterExecutionBegan: true }),
  },
  'retention-shorter-than-declared': {
    name: 'retention-shorter-than-declared',
    boundary: `the provider forgets idempotency keys after ${BENCH_TIMINGS.lyingRetentionMs} ms while its contract declares 24 h (Stripe v2: 30 days); the reply is lost and the agent repeats the step after the provider forgot the key but before its search (lagging ${BENCH_TIMINGS.lyingSearchLagMs} ms) shows the charge: a same-key resend after that acts twice (effectd's inline settle resends within milliseconds of the loss, before the provider forgets)`,
    // Keyed tools whose reference lookup may lag (payments.charge, v1 and v2). With a consistent
    // lookup (email, travel) effectd finds the first object before it would resend, so the
    // provider's retention never matters; a tool looked up by its key (cloud) is asked by the very
    // key the provider forgot; the weak tools keep no key. A saga's steps are resubmitted by
    // effectd's reconciler only after the settle window, when the lookup has found the charge.
    targets: (intent) => RETENTION_LIE_TOOLS.has(intent.tool),
    sagas: false,
    providerSettings: { retentionMs: BENCH_TIMINGS.lyingRetentionMs, searchLagMs: BENCH_TIMINGS.lyingSearchLagMs },
    awaitsAuditMs: BENCH_TIMINGS.settleWindowMs + 1_000,
    async arm(context) {
      context.agent.repeatOnUnknown?.(context.target.id);
      return providerRule(context, { type: 'drop-after-mutation' }, {
        hooks: {
          beforeCall: (intent, n) => {
            // The agent's resubmission comes after the provider forgot the key (its contract still protects it).
            if (isTarget(context, intent, n)) context.gate.armAfterFirst(Date.now() + BENCH_TIMINGS.lyingRetentionMs + 200);
          },
        },
      });
    },
  },
  'late-delivery': {
    name: 'late-delivery',
    boundary: `the request reaches the provider ${BENCH_TIMINGS.lateDeliveryMs} ms after it was sent (a slow network, a queue in front of the provider): after the caller's ${BENCH_TIMINGS.timeoutMs} ms timeout and the tool's ${BENCH_TIMINGS.settleWindowMs} ms settle window, and it commits; on a keyless tool with a consistent lookup effectd has proven it absent by then and the agent has done it again under a new step: effectd must detect the late arrival (its absence audit, ${BENCH_TIMINGS.absenceAuditMs} ms after the proof) and queue it for an operator`,
    // Keyless tools with a consistent lookup (weak.append-line): the only ones where "not found after
    // the window" is a proof of absence. A keyed tool is resent under its key and the provider dedupes
    // the late request; a lookup that may lag proves nothing, so the effect is escalated instead.
    targets: (intent) => LATE_DELIVERY_TOOLS.has(intent.tool),
    sagas: false,
    // The absence audit comes absenceAuditMs after the proof of absence (≈ 1.45 s into the cell; the agent is done by ≈ 2 s).
    awaitsAuditMs: BENCH_TIMINGS.absenceAuditMs + 1_500,
    async arm(context) {
      const route = benchTool(context.target.tool);
      const proxy = context.proxy(context.target.tool);
      proxy.arm({ pathPrefix: route.mutationPath, nth: context.targetNth, action: 'deliver-late', delayMs: BENCH_TIMINGS.lateDeliveryMs, hook: () => undefined });
      return armed({ injected: async () => proxy.stats().fired, lateDeliveries: () => proxy.lateDeliveries() });
    },
  },
  none: {
    name: 'none',
    boundary: 'no fault',
    arm: async () => armed(),
  },
};

const LATE_DELIVERY_TOOLS = keylessConsistentTools();

const RETENTION_LIE_TOOLS: ReadonlySet<string> = new Set(['payments.charge', 'payments.charge-v2']);

/** Whether a fault runs on a workload: it has an intent the fault can hit (and is no saga, when the fault skips sagas). */
export function faultApplies(spec: FaultSpec, workload: Workload): boolean {
  if (workload.saga && spec.sagas === false) return false;
  if (workload.skipsFaults?.includes(spec.name)) return false;
  return !spec.targets || workload.intents('x').some((intent) => spec.targets!(intent));
}

/**
 * Which intent a cell's fault hits (seeded) among `candidates`, and which request with its tool
 * that is: `sequence` is every intent in the order its first request goes out.
 */
export function chooseTarget(candidates: IntentSpec[], rng: Rng, sequence: IntentSpec[] = candidates): { target: IntentSpec; nth: number } {
  const target = candidates[rng.int(0, candidates.length - 1)]!;
  const index = sequence.findIndex((i) => i.id === target.id);
  const nth = 1 + sequence.slice(0, index).filter((i) => i.tool === target.tool).length;
  return { target, nth };
}
