/**
 * Every span effectd makes and every attribute it sets: a fixed, bounded set of names (no name is
 * built from data). Values are ids, tool names, counts and verdicts; never a token, a secret, a
 * provider key, an argument value, a URL path or query, or a header.
 */
export const SPAN = {
  /** One effect command through the gateway, from any front door. */
  command: 'effectd.command',
  /** One round of the shell's read–decide–append (declare + claim, replay, hold, reconcile-first). */
  declare: 'effectd.declare',
  /** One dispatch to the provider (the provider call): its request carries this span's traceparent. */
  attempt: 'effectd.attempt',
  /** One reconciliation check at the provider (a lookup, an audit) or of the settle window. */
  reconcileCheck: 'effectd.reconcile.check',
  /** One step (or compensation) of a saga, run as an effect. */
  sagaStep: 'effectd.saga.step',
} as const;

export type SpanName = (typeof SPAN)[keyof typeof SPAN];

export const ATTR = {
  tool: 'effectd.tool',
  workflowId: 'effectd.workflow_id',
  step: 'effectd.step',
  slot: 'effectd.slot',
  effectId: 'effectd.effect_id',
  tenant: 'effectd.tenant',
  ingress: 'effectd.ingress',
  /** The three-state answer: done / not_done / unknown. */
  outcome: 'effectd.outcome',
  /** The effect's state after the command (committed, unknown, held, …). */
  state: 'effectd.state',
  /** How the shell got there: dispatched, replayed, reconciled, in-flight, held-unknown, held, saga. */
  disposition: 'effectd.disposition',
  /** What one round of the shell decided: answer, dispatch, reconcile, again. */
  decision: 'effectd.decision',
  attempt: 'effectd.attempt',
  /** The attempt's outcome class: committed, failed_before_effect, terminal_failure, unknown. */
  classification: 'effectd.classification',
  /** The provider answered with a stored (replayed) result under the key. */
  replayed: 'effectd.replayed',
  checkKind: 'effectd.check.kind',
  checkVerdict: 'effectd.check.verdict',
  /** inline (an agent resubmitted an unknown effect) or scheduled (the background reconciler). */
  checkMode: 'effectd.check.mode',
  saga: 'effectd.saga',
  /** run (a step) or compensate (its undo). */
  sagaPhase: 'effectd.saga.phase',
  /** OpenTelemetry semantic conventions (HTTP client, errors). */
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  urlScheme: 'url.scheme',
  errorType: 'error.type',
} as const;

export type AttributeName = (typeof ATTR)[keyof typeof ATTR];

/** Every attribute name effectd may set, for tests that hold spans to the bounded set. */
export const ATTRIBUTE_NAMES: ReadonlySet<string> = new Set(Object.values(ATTR));
