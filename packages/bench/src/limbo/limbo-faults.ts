import type { FaultRule } from '@effectd/simulators';
import { benchTool } from '../bench-config.js';
import { armed, providerRule, type ArmedFault, type FaultContext, type FaultSpec } from '../faults.js';
import type { IntentSpec } from '../workloads.js';
import type { LimboFaultName } from './limbo-names.js';
import { logUniformMs, SIM_SCALE, SimTimeDriver } from './sim-time.js';
import { CodedError } from '../../../../src/shared/coded-error.js';

/** LIMBO's simulated times (ms of the providers' clock, which runs SIM_SCALE× real time in these cells). */
export const LIMBO_TIMES = {
  /** timeout_late: the provider commits about 90 s after the request, long after the caller's timeout. */
  timeoutLateMs: 90_000,
  /** The heavy-tailed late commit: log-uniform between these. */
  tailMinMs: 40_000,
  tailMaxMs: 7_200_000,
  /** partial-timeout: the items that commit do so this long after the request (past the caller's timeout). */
  partialCommitMs: 60_000,
  /** Read paths lag between these (a search that is not read-after-write consistent). */
  readLagMinMs: 120_000,
  readLagMaxMs: 180_000,
  /**
   * payload-drift: the provider commits this long after the request, after effectd's inline settle
   * has answered `unknown` (≈ 2.3 s real), so the model's repair reaches effectd.
   */
  driftCommitMs: 300_000,
  /** When the agent is done, the providers' clocks jump this far: past every commit still held. */
  finalJumpMs: 3 * 3_600_000,
} as const;

type RuleAction = FaultRule['action'];

/** Provider-side rules on one provider's clock that runs fast (and jumps when the agent is done). */
async function onFastClock(context: FaultContext, arm: () => Promise<ArmedFault>, drawn?: string): Promise<ArmedFault> {
  const driver = SimTimeDriver.start(context.providers);
  let fault: ArmedFault;
  try {
    fault = await arm();
  } catch (error) {
    await driver.stop();
    throw error;
  }
  let done: Promise<void> | undefined;
  const finish = () => (done ??= (async () => {
    await driver.jump(LIMBO_TIMES.finalJumpMs);
    await driver.stop();
    await fault.finished();
  })());
  const clock = () => `the providers' clocks ran ${SIM_SCALE}× real time, then jumped ${LIMBO_TIMES.finalJumpMs / 3_600_000} h when the agent was done (${Math.round(driver.advancedMs / 1000)} s simulated added in all)`;
  return { ...fault, finished: finish, notes: () => [...(drawn ? [drawn] : []), ...(fault.notes?.() ?? []), clock()] };
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** What tells one item of a batch apart in its request body: the recipient, the invoice. */
function itemMark(intent: IntentSpec): string {
  const identity = intent.identity;
  switch (identity.kind) {
    case 'email':
      return identity.to;
    case 'charge':
      return identity.invoiceId;
    default:
      throw new CodedError('internal', `a LIMBO batch fault cannot tell ${intent.id} (${identity.kind}) apart from its batch`);
  }
}

/**
 * The batch the target belongs to (every intent with its tool, in order) split by the cell's seed:
 * at least one item commits and at least one does not. effectd has no batch tool, so a batch is a
 * workflow of N effects of one tool (a slot each), and the fault hits each item's first request.
 */
async function batchRules(context: FaultContext, committed: RuleAction, notCommitted: RuleAction): Promise<ArmedFault> {
  const batch = context.intents.filter((i) => i.tool === context.target.tool);
  if (batch.length < 2) throw new CodedError('internal', `a LIMBO batch fault needs a batch: ${context.target.tool} has ${batch.length} item(s) in this workload`);
  const rng = context.rng.fork('batch');
  const count = rng.int(1, batch.length - 1);
  const order = batch.map((intent) => ({ intent, r: rng.next() })).sort((a, b) => a.r - b.r).map((x) => x.intent);
  const commits = new Set(order.slice(0, count).map((i) => i.id));
  const route = benchTool(context.target.tool);
  await context.providers.armFaults(route.provider, batch.map((intent) => ({
    match: { method: 'POST', pathPrefix: route.mutationPath, bodyIncludes: itemMark(intent), times: 1 },
    action: commits.has(intent.id) ? committed : notCommitted,
  })), 'first');
  const split = `${context.target.tool} batch of ${batch.length}: ${order.slice(0, count).map((i) => i.id).join(', ')} commit; ${order.slice(count).map((i) => i.id).join(', ')} do not`;
  return armed({ injected: () => context.providers.faultsFired(), notes: () => [split] });
}

const lostAck = (context: FaultContext) => providerRule(context, { type: 'drop-after-mutation' });
const chargeTools: ReadonlySet<string> = new Set(['payments.charge', 'payments.charge-v2']);
/** The tools whose provider has neither an idempotency key nor any read path: a write with no read-back. */
const noReadBackTools: ReadonlySet<string> = new Set(['weak.notify']);
const emailTools: ReadonlySet<string> = new Set(['email.send']);

export const LIMBO_FAULT_SPECS: Record<LimboFaultName, FaultSpec> = {
  'lost-ack': {
    name: 'lost-ack',
    boundary: 'lost acknowledgement: the provider commits and the reply never reaches the caller',
    sagas: false,
    arm: lostAck,
  },
  'timeout-late': {
    name: 'timeout-late',
    boundary: `timeout_late: the caller times out; the provider commits ${LIMBO_TIMES.timeoutLateMs / 1000} s (simulated) after the request`,
    sagas: false,
    targets: (intent) => chargeTools.has(intent.tool),
    arm: (context) => onFastClock(context, () => providerRule(context, { type: 'late-commit', commitAfterMs: LIMBO_TIMES.timeoutLateMs })),
  },
  'late-commit-tail': {
    name: 'late-commit-tail',
    boundary: `heavy-tailed late commit: the caller times out; the provider commits log-uniformly ${LIMBO_TIMES.tailMinMs / 1000} s to ${LIMBO_TIMES.tailMaxMs / 3_600_000} h (simulated) after the request`,
    sagas: false,
    targets: (intent) => chargeTools.has(intent.tool),
    arm(context) {
      const delay = logUniformMs(context.rng.fork('tail').next(), LIMBO_TIMES.tailMinMs, LIMBO_TIMES.tailMaxMs);
      return onFastClock(context, () => providerRule(context, { type: 'late-commit', commitAfterMs: delay }), `late-commit-tail: the provider commits ${seconds(delay)} (simulated) after the request`);
    },
  },
  'duplicate-delivery': {
    name: 'duplicate-delivery',
    boundary: 'duplicate delivery: the agent\'s tool call is delivered twice (a queue redelivers it after it was handled)',
    sagas: false,
    async arm(context) {
      let delivered = 0;
      if (!context.agent.redeliver) throw new CodedError('internal', 'duplicate-delivery needs an agent that calls each step itself');
      context.agent.redeliver(context.target.id, () => {
        delivered += 1;
      });
      return armed({ injected: async () => delivered });
    },
  },
  'partial-timeout': {
    name: 'partial-timeout',
    boundary: `partial timeout: every item of a batch times out; some of them commit ${LIMBO_TIMES.partialCommitMs / 1000} s (simulated) later, the others never reached the provider`,
    sagas: false,
    targets: (intent) => emailTools.has(intent.tool),
    arm: (context) => onFastClock(context, () => batchRules(context, { type: 'late-commit', commitAfterMs: LIMBO_TIMES.partialCommitMs }, { type: 'drop-before-mutation' })),
  },
  'partial-batch': {
    name: 'partial-batch',
    boundary: 'partial batch: a batch is answered 502 for every item, but part of it committed',
    sagas: false,
    targets: (intent) => emailTools.has(intent.tool),
    arm: (context) => batchRules(context, { type: 'status', status: 502, afterCommit: true }, { type: 'status', status: 502 }),
  },
  'misleading-500': {
    name: 'misleading-500',
    boundary: 'misleading 500: the provider commits, then answers 500 (Stripe v1 stores that 500 under the key and replays it)',
    sagas: false,
    arm: (context) => providerRule(context, { type: 'status', status: 500, afterCommit: true }),
  },
  'read-lag': {
    name: 'read-lag',
    boundary: `read lag: the provider's search lags ${LIMBO_TIMES.readLagMinMs / 1000}–${LIMBO_TIMES.readLagMaxMs / 1000} s (simulated) behind its writes, and the caller times out on a charge that commits ${LIMBO_TIMES.timeoutLateMs / 1000} s later: for minutes every read says "not found"`,
    sagas: false,
    targets: (intent) => chargeTools.has(intent.tool),
    providerSettingsOf: (rng) => ({ searchLagMs: rng.int(LIMBO_TIMES.readLagMinMs, LIMBO_TIMES.readLagMaxMs) }),
    arm: (context) => onFastClock(context, () => providerRule(context, { type: 'late-commit', commitAfterMs: LIMBO_TIMES.timeoutLateMs })),
  },
  'payload-drift': {
    name: 'payload-drift',
    boundary: `payload drift: the caller times out (the provider commits ${LIMBO_TIMES.driftCommitMs / 60_000} min later, simulated) and the model's repair of the same step rewrites a parameter`,
    sagas: false,
    async arm(context) {
      context.agent.driftOnRepair(context.target.id);
      return onFastClock(context, () => providerRule(context, { type: 'late-commit', commitAfterMs: LIMBO_TIMES.driftCommitMs }));
    },
  },
  'no-read-back': {
    name: 'no-read-back',
    boundary: 'a write with no read-back: the provider has no key and no lookup, and the reply is lost after it committed',
    sagas: false,
    targets: (intent) => noReadBackTools.has(intent.tool),
    arm: lostAck,
  },
};
