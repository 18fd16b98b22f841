// What a project imports from 'effectd' to write its effectd.config.mjs: its providers, tools, sagas
// and compensations, typed. effectd validates all of it again when it loads the file.
import type { z } from 'zod';
import type { argFieldSpec } from '../core/arg-fields.js';
import type { CompensationRetryPolicy } from '../core/saga/saga-decision.js';
import type { CompensationDefinition, SagaDefinition } from '../core/saga/saga-definition.js';
import type { effectdConfigSpec, httpProviderSpec, mcpProviderSpec, toolContractSpec } from './tool-contract.js';

export { z } from 'zod';
export { defineSaga, SagaDefinitionError } from '../core/saga/saga-definition.js';
export type { CompensationDefinition, Receipts, Reversibility, SagaDefinition, SagaStepDefinition } from '../core/saga/saga-definition.js';
export type { CompensationRetryPolicy } from '../core/saga/saga-decision.js';
export type ArgField = z.input<typeof argFieldSpec>;

/** A tool's contract as written in a config (defaults filled in by effectd): see config/effectd.config.schema.json. */
export type ToolContract = z.input<typeof toolContractSpec>;
export type HttpProvider = z.input<typeof httpProviderSpec>;
export type McpProvider = z.input<typeof mcpProviderSpec>;
export type Provider = HttpProvider | McpProvider;

type ConfigFields = z.input<typeof effectdConfigSpec>;

/** The default export of an effectd.config.mjs. */
export interface EffectdUserConfig extends Omit<ConfigFields, 'providers' | 'tools' | 'sagas'> {
  /** By name; a tool names its provider. A base URL can be overridden with EFFECTD_PROVIDER_<NAME>_URL. */
  providers?: Record<string, Provider>;
  tools?: readonly ToolContract[];
  /** The project's sagas, or `{ definitions, compensationRetry }` to tune how refused compensations are retried. */
  sagas?: readonly SagaDefinition<any>[] | { definitions?: readonly SagaDefinition<any>[]; compensationRetry?: Partial<CompensationRetryPolicy> };
}

/** Types a configuration; effectd checks it when `effectd start --config` (or `effectd config check`) loads it. */
export function defineConfig(config: EffectdUserConfig): EffectdUserConfig {
  return config;
}

/** Types one tool's contract (its provider, request, arguments, reversibility, idempotency, lookup…). */
export function defineTool(tool: ToolContract): ToolContract {
  return tool;
}

/** Types the undo of a compensable saga step: given the step's receipt, the call that undoes it. */
export function defineCompensation<I = unknown>(compensation: CompensationDefinition<I>): CompensationDefinition<I> {
  return compensation;
}
