import type { z } from 'zod';

export type Reversibility = 'read' | 'idempotent' | 'compensable' | 'irreversible';

/** Earlier steps' receipts by step name (only steps that committed). */
export type Receipts = Readonly<Record<string, string>>;

/** The undo of a compensable step, declared with the step, before anything runs (compensations/). */
export interface CompensationDefinition<I> {
  name: string;
  tool: string;
  /** How the compensation itself behaves. An irreversible compensation must say why that is acceptable. */
  reversibility: Exclude<Reversibility, 'read'>;
  irreversibleBecause?: string;
  args(receipt: string, input: I, receipts: Receipts): Record<string, unknown>;
}

export interface SagaStepDefinition<I> {
  name: string;
  tool: string;
  reversibility: Reversibility;
  args(input: I, receipts: Receipts): Record<string, unknown>;
  compensation?: CompensationDefinition<I>;
}

export interface SagaDefinition<I = unknown> {
  name: string;
  version: number;
  description: string;
  input: z.ZodType<I>;
  steps: readonly SagaStepDefinition<I>[];
}

export class SagaDefinitionError extends Error {
  constructor(saga: string, problems: string[]) {
    super(`saga "${saga}" is not valid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SagaDefinitionError';
  }
}

/** How the tool registry describes a tool's reversibility, so a definition can be checked against its contracts. */
export type ToolReversibility = (tool: string) => Reversibility | undefined;

/**
 * Checks a saga at registration, with errors that say what to fix:
 * - a compensable step without a compensation;
 * - an irreversible step before a compensable one (irreversible steps only run once every
 *   compensable step has committed, so nothing compensable may come after them);
 * - a compensation that is itself irreversible without saying so;
 * - tools that don't exist, or whose contract contradicts the declared reversibility.
 */
export function validateSaga<I>(saga: SagaDefinition<I>, toolReversibility?: ToolReversibility): void {
  const problems: string[] = [];
  const names = new Set<string>();
  if (saga.steps.length === 0) problems.push('it has no steps');
  saga.steps.forEach((step, index) => {
    if (names.has(step.name)) problems.push(`step "${step.name}" is declared twice: give each step its own name`);
    names.add(step.name);
    if (!/^[a-z][a-z0-9-]*$/.test(step.name)) problems.push(`step "${step.name}": names are lower-case words joined by dashes`);
    if (step.reversibility === 'compensable' && !step.compensation) {
      problems.push(`step "${step.name}" is compensable but declares no compensation: add one (see compensations/) or declare the step idempotent or irreversible`);
    }
    if (step.compensation && step.reversibility !== 'compensable') {
      problems.push(`step "${step.name}" is ${step.reversibility} but declares a compensation: only compensable steps are compensated`);
    }
    if (step.reversibility === 'irreversible') {
      const later = saga.steps.slice(index + 1).filter((s) => s.reversibility === 'compensable').map((s) => s.name);
      if (later.length > 0) {
        problems.push(`step "${step.name}" is irreversible but compensable step(s) ${later.map((l) => `"${l}"`).join(', ')} come after it and could still fail with nothing to undo "${step.name}": move them before "${step.name}"`);
      }
    }
    const compensation = step.compensation;
    if (compensation) {
      const contract = toolReversibility?.(compensation.tool);
      const irreversible = compensation.reversibility === 'irreversible' || contract === 'irreversible';
      if (irreversible && !compensation.irreversibleBecause) {
        problems.push(`compensation "${compensation.name}" of step "${step.name}" is irreversible (${compensation.tool}${contract === 'irreversible' ? '\'s contract says so' : ''}) but does not say so: set reversibility: 'irreversible' and irreversibleBecause: '<why a one-way undo is acceptable>'`);
      }
      if (toolReversibility && contract === undefined) problems.push(`compensation "${compensation.name}" of step "${step.name}" uses tool ${compensation.tool}, which is not configured`);
    }
    if (toolReversibility) {
      const contract = toolReversibility(step.tool);
      if (contract === undefined) problems.push(`step "${step.name}" uses tool ${step.tool}, which is not configured`);
      else if (contract === 'irreversible' && step.reversibility !== 'irreversible') problems.push(`step "${step.name}" is declared ${step.reversibility}, but tool ${step.tool}'s contract says irreversible`);
    }
  });
  if (problems.length > 0) throw new SagaDefinitionError(saga.name, problems);
}

/** Declares a saga; the structure is checked now, the tools when effectd registers it. */
export function defineSaga<I>(saga: SagaDefinition<I>): SagaDefinition<I> {
  validateSaga(saga);
  return saga;
}

export function compensationStepKey(step: string): string {
  return `compensate:${step}`;
}
