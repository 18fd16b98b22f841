import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { EffectdError } from '../core/errors.js';
import { packageRoot } from '../shared/package-root.js';
import { effectdConfigSpec, isMcpProvider, type EffectdConfig, type ProviderSpec } from './tool-contract.js';
import { providerUrlVariable } from './settings.js';

/** A configuration as effectd runs it: the user's file merged with the built-in tools when it asks for them. */
export type ResolvedConfig = Omit<EffectdConfig, 'builtinSagas'> & { builtinSagas: boolean };

export interface UserConfigSource {
  /** What the file holds (parsed JSON, or a module's default export). */
  raw: unknown;
  /** Where it came from, for error messages. */
  source: string;
}

export interface LoadConfigOptions {
  /** The user's configuration (see src/config/read-config-file.ts). Without one, effectd runs the built-in tools and sagas. */
  user?: UserConfigSource;
  /** Provider base URLs to override (the demo and the benchmark start simulators on free ports); applied after the environment's. */
  providerUrls?: Record<string, string>;
  /** The EFFECTD_PROVIDER_<NAME>_URL overrides the settings hold, by variable (Settings.providerUrls), each already an http(s) URL. */
  providerUrlVariables?: Readonly<Record<string, string>>;
  /** Told which environment overrides applied, and which named no provider. */
  onOverride?: (line: string) => void;
}

/** Loads and validates configuration; a bad file fails with the tool, saga and field it is about. */
export function loadConfig(options: LoadConfigOptions): ResolvedConfig {
  const builtin = parseConfig(readJson(join(packageRoot(), 'config', 'builtin-tools.json')), 'config/builtin-tools.json');
  const user = options.user ? parseConfig(options.user.raw, options.user.source) : undefined;
  // No config file: the zero-setup default runs the built-in simulators' tools and sagas. A config
  // file gets them only when it asks (builtinTools: true), so a team's effectd runs only its own tools.
  const builtinTools = user ? user.builtinTools : true;
  const builtinSagas = user ? (user.builtinSagas ?? user.builtinTools) : true;
  const providers: Record<string, ProviderSpec> = { ...(builtinTools ? builtin.providers : {}), ...(user?.providers ?? {}) };
  applyEnvironmentUrls(providers, options.providerUrlVariables ?? {}, options.onOverride ?? (() => {}));
  for (const [name, url] of Object.entries(options.providerUrls ?? {})) {
    const existing = providers[name];
    if (existing && !isMcpProvider(existing)) providers[name] = { ...existing, baseUrl: url };
  }
  const tools = [...(builtinTools ? builtin.tools : []), ...(user?.tools ?? [])];
  return { providers, tools, builtinTools, builtinSagas, contentIndex: user?.contentIndex ?? builtin.contentIndex, sagas: user?.sagas ?? builtin.sagas };
}

export { providerUrlVariable };

/** Harnesses that start providers on changing ports point a provider elsewhere without editing the config. */
function applyEnvironmentUrls(providers: Record<string, ProviderSpec>, overrides: Readonly<Record<string, string>>, tell: (line: string) => void): void {
  const used = new Set<string>();
  for (const [name, provider] of Object.entries(providers)) {
    const variable = providerUrlVariable(name);
    const url = overrides[variable];
    if (url === undefined || url === '') continue;
    used.add(variable);
    if (!isHttpUrl(url)) throw new EffectdError('invalid_config', `${variable} is not an http(s) URL: "${url}" (it overrides the base URL of provider "${name}"; e.g. http://127.0.0.1:4400)`);
    if (!isMcpProvider(provider)) providers[name] = { ...provider, baseUrl: url };
    else if ('url' in provider.mcp) providers[name] = { ...provider, mcp: { ...provider.mcp, url } };
    else throw new EffectdError('invalid_config', `${variable} is set, but provider "${name}" is an MCP server started as a command (${provider.mcp.command}): it has no URL to override`);
    tell(`provider ${name}: ${isMcpProvider(provider) ? 'MCP URL' : 'base URL'} ${withoutCredentials(url)} (from ${variable})`);
  }
  for (const variable of Object.keys(overrides)) {
    if (!used.has(variable) && overrides[variable]) {
      tell(`${variable} is set but names no configured provider (providers: ${Object.keys(providers).join(', ') || 'none'}); ignored`);
    }
  }
}

function isHttpUrl(url: string): boolean {
  return URL.canParse(url) && /^https?:$/.test(new URL(url).protocol);
}

/** A URL as it may be printed: user and password (if any) left out. */
export function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

export function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new EffectdError('invalid_config', `cannot read configuration ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new EffectdError('invalid_config', `configuration ${file} is not valid JSON: ${(error as Error).message}`);
  }
}

export function parseConfig(raw: unknown, source: string): EffectdConfig {
  const result = effectdConfigSpec.safeParse(raw);
  if (result.success) return result.data;
  const lines = flattenUnions(result.error.issues).map((issue) => `  - ${describePath(raw, issue.path)}: ${issue.message}`);
  throw new EffectdError('invalid_config', `invalid configuration in ${source}:\n${lines.join('\n')}`, { issues: result.error.issues });
}

interface ConfigIssue {
  path: PropertyKey[];
  message: string;
  code?: string;
  errors?: ConfigIssue[][];
}

/**
 * `sagas` is a list or an object: report what is wrong with the shape the user wrote, not "Invalid
 * input" (the branch whose only complaint is the top-level type is the shape they did not write).
 */
function flattenUnions(issues: readonly ConfigIssue[]): ConfigIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'invalid_union' || !issue.errors?.length) return [issue];
    const meant = issue.errors.filter((branch) => !(branch.length === 1 && branch[0]!.code === 'invalid_type' && branch[0]!.path.length === 0));
    if (meant.length !== 1) return [issue];
    return flattenUnions(meant[0]!).map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
  });
}

/**
 * `tools[2].idempotency.retentionMs` becomes `tool "payments.charge", field "idempotency.retentionMs"`;
 * `sagas[0].steps.1.args` (or `sagas.definitions[0]…`) becomes `saga "book-and-bill", field "steps.1.args"`.
 */
function describePath(raw: unknown, path: readonly PropertyKey[]): string {
  if (path[0] === 'tools' && typeof path[1] === 'number') {
    const tool = (raw as { tools?: { name?: unknown }[] }).tools?.[path[1]]?.name;
    const field = path.slice(2).join('.') || '(the tool itself)';
    return `tool "${typeof tool === 'string' ? tool : `#${path[1]}`}", field "${field}"`;
  }
  const sagaAt = path[0] === 'sagas' ? (typeof path[1] === 'number' ? 1 : path[1] === 'definitions' && typeof path[2] === 'number' ? 2 : -1) : -1;
  if (sagaAt > 0) {
    const sagas = (raw as { sagas?: unknown }).sagas;
    const list = (Array.isArray(sagas) ? sagas : (sagas as { definitions?: unknown[] } | undefined)?.definitions) as { name?: unknown }[] | undefined;
    const index = path[sagaAt] as number;
    const saga = list?.[index]?.name;
    const field = path.slice(sagaAt + 1).join('.') || '(the saga itself)';
    return `saga "${typeof saga === 'string' ? saga : `#${index}`}", field "${field}"`;
  }
  return `field "${path.join('.') || '(top level)'}"`;
}
