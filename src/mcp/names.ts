/**
 * MCP tool names for effectd's tools. A contract's name (`payments.charge`) is already a valid MCP
 * name (SEP-986: 1–128 of A–Z a–z 0–9 _ - .), but the model APIs clients forward tools to (OpenAI,
 * Anthropic: `^[a-zA-Z0-9_-]{1,64}$`) refuse dots, so every dot becomes `_`: `payments_charge`.
 * Contract names are lower-case words joined by dots, with no `_` (src/providers/tool-contract.ts),
 * so the mapping is one-to-one and reversible. Sagas are `saga_<name>` (`saga_trip-booking`, the
 * `saga:<name>` tool of HTTP and Kafka); effectd's own read tools are `effectd_status` and
 * `effectd_history`.
 */
export const SAGA_PREFIX = 'saga_';
export const STATUS_TOOL = 'effectd_status';
export const HISTORY_TOOL = 'effectd_history';

/** The MCP name of a contract's tool: dots become underscores. */
export function mcpToolName(contractName: string): string {
  return contractName.replaceAll('.', '_');
}

/** The contract behind an MCP tool name (the inverse of mcpToolName). */
export function contractToolName(mcpName: string): string {
  return mcpName.replaceAll('_', '.');
}

export function mcpSagaName(saga: string): string {
  return `${SAGA_PREFIX}${saga}`;
}

/** Whether a name keeps to what SEP-986 allows and model APIs accept (1–64 of A–Z a–z 0–9 _ -). */
export function portableToolName(name: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(name);
}
