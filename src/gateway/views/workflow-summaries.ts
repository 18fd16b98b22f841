import { IN_PROGRESS_STATUSES } from '../../core/effect-lifecycle.js';
import { effectStatus, needsHuman, type EffectState, type EffectStatus } from '../../core/effect-state.js';
import { compareWorkflows } from './workflow-list-cursor.js';

/** One workflow as a list row: where its effects stand and whether a human is needed. */
export interface WorkflowSummary {
  tenant: string;
  workflowId: string;
  effects: number;
  states: Partial<Record<EffectStatus, number>>;
  tools: string[];
  /** The saga this workflow runs (its steps are declared by `saga:<name>`); absent for a plain workflow. */
  saga?: string;
  /** Some effect is escalated, terminal or a duplicate nobody dealt with: only an operator moves it. */
  needsOperator: boolean;
  /** Some effect is still moved by effectd itself (the lifecycle table's inProgress: declared, held, in flight, unknown). */
  open: boolean;
  firstEventAt: string;
  lastEventAt: string;
}

const OPEN = IN_PROGRESS_STATUSES;
/** A saga's own steps are declared by `saga:<name>` (src/shell/saga-runner.ts). */
const SAGA_PRINCIPAL = 'saga:';

/** Groups effects into workflows, most recently active first. */
export function summarizeWorkflows(effects: Iterable<EffectState>, now: number, stillLooking: (effect: EffectState, now: number) => boolean = () => false): WorkflowSummary[] {
  const byWorkflow = new Map<string, { tenant: string; workflowId: string; effects: EffectState[] }>();
  for (const effect of effects) {
    const { tenant, workflowId } = effect.declared;
    const key = `${tenant}\u0000${workflowId}`;
    const group = byWorkflow.get(key) ?? { tenant, workflowId, effects: [] };
    group.effects.push(effect);
    byWorkflow.set(key, group);
  }
  const rows = [...byWorkflow.values()].map(({ tenant, workflowId, effects: members }) => {
    const states: Partial<Record<EffectStatus, number>> = {};
    for (const e of members) {
      const s = effectStatus(e, now);
      states[s] = (states[s] ?? 0) + 1;
    }
    const seen = Object.keys(states) as EffectStatus[];
    const saga = members.map((e) => e.declared.principal).find((p) => p.startsWith(SAGA_PRINCIPAL))?.slice(SAGA_PRINCIPAL.length);
    return {
      tenant, workflowId, effects: members.length, states,
      tools: [...new Set(members.map((e) => e.declared.tool))].sort(),
      ...(saga ? { saga } : {}),
      needsOperator: members.some((e) => needsHuman(e, now, stillLooking(e, now))),
      open: seen.some((s) => OPEN.has(s)),
      first: Math.min(...members.map((e) => e.declared.at)),
      last: Math.max(...members.map((e) => e.lastEventAt)),
    };
  });
  return rows
    .sort((a, b) => compareWorkflows({ ...a, lastEventAt: a.last }, { ...b, lastEventAt: b.last }))
    .map(({ first, last, ...row }) => ({ ...row, firstEventAt: new Date(first).toISOString(), lastEventAt: new Date(last).toISOString() }));
}
