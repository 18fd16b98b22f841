import type { SagaRegistry } from '../shell/saga-registry.js';
import { withoutCredentials, type ResolvedConfig } from '../config/config-loader.js';
import { isMcpProvider } from '../config/tool-contract.js';
import type { ToolRegistry } from '../providers/tool-registry.js';

/** What `effectd config check` prints: providers (with URLs), tools (with provider), sagas (with steps). Never a header value. */
export function configSummary(config: ResolvedConfig, tools: ToolRegistry, sagas: SagaRegistry): string[] {
  const lines: string[] = [];
  const providers = Object.entries(config.providers);
  lines.push(`providers (${providers.length}):`);
  for (const [name, provider] of providers) {
    const where = !isMcpProvider(provider) ? withoutCredentials(provider.baseUrl) : 'url' in provider.mcp ? `MCP ${withoutCredentials(provider.mcp.url)}` : `MCP stdio: ${provider.mcp.command}`;
    lines.push(`  ${name}  ${where}`);
  }
  lines.push(`tools (${tools.list().length}):`);
  for (const tool of tools.list()) {
    const { spec } = tool;
    const key = spec.idempotency.kind === 'none' ? 'no idempotency key' : `key ${spec.idempotency.kind === 'header' ? `header ${spec.idempotency.header}` : spec.idempotency.kind === 'body-field' ? `body field ${spec.idempotency.field}` : 'in _meta'}`;
    const call = spec.mcp ? `MCP tool ${spec.mcp.tool}` : `${spec.request!.method} ${spec.request!.path}`;
    lines.push(`  ${tool.name} v${spec.version}  provider ${tool.provider.name}, ${call}, ${spec.reversibility}, ${key}, lookup ${spec.lookup.by}`);
  }
  const names = sagas.names();
  lines.push(`sagas (${names.length}):`);
  for (const name of names) {
    const saga = sagas.get(name)!;
    lines.push(`  ${saga.name} v${saga.version}${saga.description ? `  ${saga.description}` : ''}`);
    saga.steps.forEach((step, index) => {
      const undo = step.compensation ? `; undo: ${step.compensation.name} (${step.compensation.tool})` : '';
      lines.push(`    ${index + 1}. ${step.name}: ${step.tool}, ${step.reversibility}${undo}`);
    });
  }
  for (const [name, why] of sagas.notAvailable()) lines.push(`  (built-in saga ${name} set aside: ${why})`);
  lines.push(config.builtinTools ? 'built-in simulator tools: included (builtinTools: true)' : 'built-in simulator tools: not included (set builtinTools: true to add them)');
  return lines;
}
