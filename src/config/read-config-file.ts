import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EffectdError } from '../core/errors.js';
import { readJson, type UserConfigSource } from './config-loader.js';

const MODULE_EXTENSIONS = new Set(['.mjs', '.js', '.cjs']);
const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);

/**
 * Reads a user's configuration: JSON, or an ES module whose default export is the config (built
 * with `defineConfig` from 'effectd'), or a function returning it. Validation is parseConfig's.
 */
export async function readConfigFile(file: string): Promise<UserConfigSource> {
  const path = resolve(file);
  const extension = extname(path).toLowerCase();
  if (extension === '.json') {
    const raw = readJson(path);
    if (definesSagas(raw)) throw new EffectdError('invalid_config', `configuration ${file} declares sagas: saga definitions are code (step arguments, compensations), so they live in an ES module config (effectd.config.mjs, defineSaga from 'effectd'); a JSON config may set sagas.compensationRetry only`);
    return { raw, source: file };
  }
  if (!MODULE_EXTENSIONS.has(extension) && !TYPESCRIPT_EXTENSIONS.has(extension)) {
    throw new EffectdError('invalid_config', `configuration ${file}: effectd reads .json files and JavaScript modules (.mjs, .js, .cjs), not "${extension || 'no extension'}"`);
  }
  if (!existsSync(path)) throw new EffectdError('invalid_config', `cannot read configuration ${file}: no such file (${path})`);
  let module: { default?: unknown };
  try {
    module = await import(pathToFileURL(path).href) as { default?: unknown };
  } catch (error) {
    if (TYPESCRIPT_EXTENSIONS.has(extension) && (error as { code?: string }).code === 'ERR_UNKNOWN_FILE_EXTENSION') {
      throw new EffectdError('invalid_config', `configuration ${file}: this Node cannot load TypeScript; compile it with your own build (tsc) and pass the emitted .js`);
    }
    throw new EffectdError('invalid_config', `configuration ${file} failed to load: ${(error as Error).message}`);
  }
  if (module.default === undefined) {
    throw new EffectdError('invalid_config', `configuration ${file} has no default export: end it with \`export default defineConfig({ providers, tools, sagas })\` (defineConfig from 'effectd')`);
  }
  let raw: unknown = module.default;
  if (typeof raw === 'function') {
    try {
      raw = await (raw as () => unknown)();
    } catch (error) {
      throw new EffectdError('invalid_config', `configuration ${file}: its default export (a function) failed: ${(error as Error).message}`);
    }
  }
  return { raw, source: file };
}

function definesSagas(raw: unknown): boolean {
  const sagas = (raw as { sagas?: unknown } | null)?.sagas;
  const definitions = Array.isArray(sagas) ? sagas : (sagas as { definitions?: unknown } | undefined)?.definitions;
  return Array.isArray(definitions) && definitions.length > 0;
}
