import { sagas as builtinSagas } from '../../sagas/index.js';
import type { ResolvedConfig } from '../config/config-loader.js';
import type { ToolRegistry } from '../providers/tool-registry.js';
import { SagaRegistry } from '../shell/saga-registry.js';

/**
 * The sagas a configuration runs. Built-in ones (when asked for) are set aside if their tools are
 * missing; the config's own are registered through the same validation and must be complete.
 */
export function configuredSagas(config: ResolvedConfig, tools: ToolRegistry): SagaRegistry {
  const registry = new SagaRegistry(tools).registerAvailable(config.builtinSagas ? builtinSagas : []);
  for (const saga of config.sagas.definitions) registry.register(saga);
  return registry;
}
