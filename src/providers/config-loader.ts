import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { EffectdError } from '../core/errors.js';
import { effectdConfigSpec, isMcpProvider, type EffectdConfig, type ProviderSpec } from './tool-contract.js';

/** The repository root (where package.json is), from src/ under vitest or dist/src/ when compiled. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('effectd: cannot find its package root');
    dir = parent;
  }
  return dir;
}

export interface LoadConfigOptions {
  /** A user's config file (JSON). Its tools are added to the built-in ones; its providers override theirs. */
  file?: string;
  /** Provider base URLs to override (the demo and the benchmark start simulators on free ports). */
  providerUrls?: Record<string, string>;
}

/** Loads and validates configuration; a bad file fails with the tool and field it is about. */
export function loadConfig(options: LoadConfigOptions = {}): EffectdConfig {
  const builtin = parseConfig(readJson(join(packageRoot(), 'config', 'builtin-tools.json')), 'config/builtin-tools.json');
  const user = options.file ? parseConfig(readJson(options.file), options.file) : undefined;
  const providers: Record<string, ProviderSpec> = { ...(user?.builtinTools === false ? {} : builtin.providers), ...(user?.providers ?? {}) };
  for (const [name, url] of Object.entries(options.providerUrls ?? {})) {
    const existing = providers[name];
    if (existing && !isMcpProvider(existing)) providers[name] = { ...existing, baseUrl: url };
  }
  const tools = [...(user?.builtinTools === false ? [] : builtin.tools), ...(user?.tools ?? [])];
  return { providers, tools, builtinTools: user?.builtinTools ?? true, contentIndex: user?.contentIndex ?? builtin.contentIndex, sagas: user?.sagas ?? builtin.sagas };
}

function readJson(file: string): unknown {
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
  const lines = result.error.issues.map((issue) => `  - ${describePath(raw, issue.path)}: ${issue.message}`);
  throw new EffectdError('invalid_config', `invalid configuration in ${source}:\n${lines.join('\n')}`, { issues: result.error.issues });
}

/** `tools[2].idempotency.retentionMs` becomes `tool "payments.charge", field "idempotency.retentionMs"`. */
function describePath(raw: unknown, path: readonly PropertyKey[]): string {
  if (path[0] === 'tools' && typeof path[1] === 'number') {
    const tool = (raw as { tools?: { name?: unknown }[] }).tools?.[path[1]]?.name;
    const field = path.slice(2).join('.') || '(the tool itself)';
    return `tool "${typeof tool === 'string' ? tool : `#${path[1]}`}", field "${field}"`;
  }
  return `field "${path.join('.') || '(top level)'}"`;
}

