import { z } from 'zod';

const faultMatchSchema = z.strictObject({
  method: z.string().min(1).optional(),
  pathPrefix: z.string().min(1).optional(),
  /** 1-based index among requests matching method + pathPrefix; absent = from the first on. */
  nth: z.number().int().positive().optional(),
  /** How many matching requests the rule applies to. */
  times: z.number().int().positive().default(1),
  /** Only requests whose body contains this text (case-insensitive): one item of a batch, one recipient. */
  bodyIncludes: z.string().min(1).optional(),
});

const faultActionSchema = z.discriminatedUnion('type', [
  // Boundary 2: received, then the socket is destroyed; nothing mutated, nothing stored under the key.
  z.strictObject({ type: z.literal('drop-before-mutation') }),
  // Boundary 3: the effect commits (and its response is stored under the key), the response is lost.
  z.strictObject({ type: z.literal('drop-after-mutation') }),
  // Boundary 6: held with the key in flight; commits once the SimClock passes receipt + commitAfterMs,
  // and the socket is destroyed at that moment instead of answering.
  z.strictObject({ type: z.literal('late-commit'), commitAfterMs: z.number().nonnegative() }),
  z.strictObject({
    type: z.literal('status'),
    status: z.number().int().min(100).max(599),
    body: z.unknown().optional(),
    /** The error happened inside execution: providers that cache failures (Stripe) store it. */
    afterExecutionBegan: z.boolean().optional(),
    /**
     * The effect committed, then execution failed (Stripe's "a 500 with side effects"): the
     * mutation stays, and providers that cache failures store this status in place of the result.
     */
    afterCommit: z.boolean().optional(),
  }),
  // Boundary 5: real-time delay, then handled normally even if the client gave up meanwhile.
  z.strictObject({ type: z.literal('delay'), ms: z.number().nonnegative().max(2_147_483_647) }),
]);

export const faultRuleSchema = z.strictObject({
  match: faultMatchSchema.default({ times: 1 }),
  action: faultActionSchema,
});

export const faultRulesSchema = z.strictObject({ rules: z.array(faultRuleSchema) });

export type FaultRule = z.infer<typeof faultRuleSchema>;
export type FaultAction = FaultRule['action'];

interface RuleState {
  rule: FaultRule;
  /** Requests that matched method + pathPrefix so far. */
  seen: number;
  /** Requests the rule was applied to. */
  fired: number;
}

/** The injected faults, evaluated in order; the first rule that applies decides. */
export class FaultBook {
  private rules: RuleState[] = [];

  replace(rules: FaultRule[]): void {
    this.rules = rules.map((rule) => ({ rule, seen: 0, fired: 0 }));
  }

  clear(): void {
    this.rules = [];
  }

  describe(): { rules: FaultRule[]; stats: { seen: number; fired: number }[] } {
    return {
      rules: this.rules.map((s) => s.rule),
      stats: this.rules.map(({ seen, fired }) => ({ seen, fired })),
    };
  }

  pick(method: string, path: string, body = ''): FaultAction | undefined {
    let chosen: RuleState | undefined;
    for (const state of this.rules) {
      if (!matches(state.rule, method, path, body)) continue;
      state.seen += 1;
      const { nth, times } = state.rule.match;
      if (chosen === undefined && state.seen >= (nth ?? 1) && state.fired < times) chosen = state;
    }
    if (chosen === undefined) return undefined;
    chosen.fired += 1;
    return chosen.rule.action;
  }
}

function matches(rule: FaultRule, method: string, path: string, body: string): boolean {
  const { method: wantMethod, pathPrefix, bodyIncludes } = rule.match;
  if (wantMethod !== undefined && wantMethod.toUpperCase() !== method.toUpperCase()) return false;
  if (bodyIncludes !== undefined && !body.toLowerCase().includes(bodyIncludes.toLowerCase())) return false;
  return pathPrefix === undefined || path.startsWith(pathPrefix);
}
