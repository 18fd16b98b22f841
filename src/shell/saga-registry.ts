import { EffectdError } from '../core/errors.js';
import { validateSaga, type SagaDefinition } from '../core/saga/saga-definition.js';
import type { ToolRegistry } from '../providers/tool-registry.js';

/** The sagas effectd can run, each checked against the configured tools' contracts when registered. */
export class SagaRegistry {
  private readonly sagas = new Map<string, SagaDefinition<any>>();

  constructor(private readonly tools: ToolRegistry) {}

  private readonly unavailable = new Map<string, string>();

  /**
   * Registers every saga whose tools are configured; one that names a missing tool is set aside
   * with the reason (a deployment may not have every provider). Any other problem fails the start.
   */
  registerAvailable(sagas: readonly SagaDefinition<any>[]): this {
    for (const saga of sagas) {
      const missing = saga.steps.flatMap((s) => [s.tool, ...(s.compensation ? [s.compensation.tool] : [])]).filter((tool) => !this.tools.get(tool));
      if (missing.length > 0) this.unavailable.set(saga.name, `tools not configured: ${[...new Set(missing)].join(', ')}`);
      else this.register(saga);
    }
    return this;
  }

  /** Sagas set aside at start, with why. */
  notAvailable(): [string, string][] {
    return [...this.unavailable.entries()];
  }

  register(saga: SagaDefinition<any>): this {
    if (this.sagas.has(saga.name)) throw new EffectdError('invalid_config', `saga "${saga.name}" is registered twice: give it another name (built-in sagas: sagas/index.ts, registered with builtinSagas)`);
    validateSaga(saga, (tool) => this.tools.get(tool)?.spec.reversibility);
    this.sagas.set(saga.name, saga);
    return this;
  }

  get(name: string): SagaDefinition<any> | undefined {
    return this.sagas.get(name);
  }

  names(): string[] {
    return [...this.sagas.keys()];
  }
}
