import type { FaultRule } from '../simulators/faults.js';
import { BENCH_TIMINGS, benchTool } from './bench-config.js';
import type { CellProviders } from './cell-providers.js';
import type { Gate } from './gate.js';
import type { FaultName, PolicyName } from './names.js';
import type { Observation } from './policies/policy.js';
import type { ProviderProxy } from './provider-proxy.js';
import type { Rng } from './rng.js';
import type { AgentHooks, ScriptedAgent } from './scripted-agent.js';
import type { IntentSpec, ProviderKind } from './workloads.js';

/** What a fault can reach around effectd: its processes and where the agent's harness sends commands. */
export interface EffectdControls {
  /** SIGKILL the instance serving the workflow; `restart` starts it again on the same data dir. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  /** The workflow moves to the second instance on the same ledger. */
  moveToSecondary(): void;
}

export interface FaultContext {
  policy: PolicyName;
  target: IntentSpec;
  /** The target's first mutating request is this one among the cell's requests to the same path. */
  targetNth: number;
  providers: CellProviders;
  proxy(kind: ProviderKind): ProviderProxy;
  agent: ScriptedAgent;
  gate: Gate;
  effectd?: EffectdControls;
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
}

export interface FaultSpec {
  name: FaultName;
  /** DESIGN.md's boundary, in a line. */
  boundary: string;
  /** key-expired cells run with a short key retention on both sides. */
  shortKeys?: boolean;
  /** rebalance cells need a second effectd instance on the same ledger. */
  needsSecondary?: boolean;
  arm(context: FaultContext): Promise<ArmedFault>;
}

type RuleAction = FaultRule['action'];

/** Arms one provider-side rule on the target's mutating request; the rest is the ArmedFault's default. */
async function providerRule(context: FaultContext, action: RuleAction, extra: Partial<ArmedFault> = {}): Promise<ArmedFault> {
  const route = benchTool(context.target.tool);
  await context.providers.armFaults(route.provider, [{ match: { method: 'POST', pathPrefix: route.mutationPath, nth: context.targetNth, times: 1 }, action }]);
  const base = armed(extra);
  return {
    ...base,
    injected: async () => (await context.providers.faultsFired()) + (await base.injected()),
  };
}

function armed(extra: Partial<ArmedFault> = {}): ArmedFault {
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
  const proxy = context.proxy(route.provider);
  const { crash, restarted } = crasher(context);
  proxy.arm({ pathPrefix: route.mutationPath, nth: context.targetNth, action, hook: crash });
  return armed({ injected: async () => proxy.stats().fired, finished: restarted });
}

export const FAULT_SPECS: Record<FaultName, FaultSpec> = {
  'before-dispatch': {
    name: 'before-dispatch',
    boundary: 'the provider is unreachable: the first attempt is refused at connect time, nothing was sent',
    async arm(context) {
      const proxy = context.proxy(benchTool(context.target.tool).provider);
      let refused = 0;
      const back = () => proxy.up();
      return armed({
        hooks: {
          beforeCall: async (intent, n) => {
            if (isTarget(context, intent, n)) await proxy.down();
          },
          afterCall: async (intent, n, observation: Observation) => {
            if (!isTarget(context, intent, n)) return;
            // effectd says it never sent the request; its ledger is the evidence.
            if (context.policy === 'effectd' && observation.kind === 'not_done' && /never sent/.test(observation.text)) refused += 1;
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
    boundary: 'the workflow moves to another instance (same ledger) while its request is in flight',
    needsSecondary: true,
    async arm(context) {
      const route = benchTool(context.target.tool);
      const proxy = context.proxy(route.provider);
      proxy.arm({
        pathPrefix: route.mutationPath, nth: context.targetNth, action: 'notify-on-forward',
        hook: () => {
          context.effectd?.moveToSecondary();
          context.agent.moveWorkflow();
        },
      });
      return providerRule(context, { type: 'delay', ms: BENCH_TIMINGS.providerDelayMs }, { injected: async () => proxy.stats().fired });
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
  none: {
    name: 'none',
    boundary: 'no fault',
    arm: async () => armed(),
  },
};

/** Which intent a cell's fault hits (seeded), and which request to its path that is. */
export function chooseTarget(intents: IntentSpec[], rng: Rng): { target: IntentSpec; nth: number } {
  const index = rng.int(0, intents.length - 1);
  const target = intents[index]!;
  const path = benchTool(target.tool).mutationPath;
  const nth = 1 + intents.slice(0, index).filter((i) => benchTool(i.tool).mutationPath === path).length;
  return { target, nth };
}
