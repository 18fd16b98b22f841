import { configSchemaText, CONFIG_SCHEMA_FILE } from '../config/config-schema.js';
import { configSummary } from '../runtime/config-summary.js';
import { configuredSagas } from '../runtime/configured-sagas.js';
import { readConfigFile } from '../config/read-config-file.js';
import { loadConfig } from '../config/config-loader.js';
import { loadSettings } from '../config/settings-loader.js';
import { settingsJson, settingsMarkdown } from '../config/settings-reference.js';
import { ToolRegistry } from '../providers/tool-registry.js';
import type { CommandSpec } from './cli-kit.js';

export const configCommand: CommandSpec = {
  name: 'config',
  summary: 'Check a configuration file (JSON or an ES module) and print its providers, tools and sagas; print the config JSON Schema, or the reference of every setting.',
  usage: 'effectd config check <effectd.config.mjs|.js|.json>   |   effectd config schema   |   effectd config settings [--json]',
  options: { json: { type: 'boolean' } },
  optionHelp: [
    ['check FILE', 'validate FILE exactly as effectd start would (contracts, templates, sagas against the tools); exit 0 when valid, 1 with each error'],
    ['schema', `print the JSON Schema of a JSON config (committed as ${CONFIG_SCHEMA_FILE})`],
    ['settings', 'print every setting: environment variable, flag, type, unit, default and meaning (a Markdown table, as in docs/configuration.md)'],
    ['--json', 'with settings: print them as JSON'],
  ],
  async run(values, positionals, env) {
    const [action, file, ...extra] = positionals;
    if (action === 'schema' && file === undefined) {
      process.stdout.write(configSchemaText());
      return 0;
    }
    if (action === 'settings' && file === undefined) {
      process.stdout.write(values.json ? settingsJson() : `${settingsMarkdown()}\n`);
      return 0;
    }
    if (values.json) throw new Error('--json goes with effectd config settings');
    if (action !== 'check') throw new Error(`say what to do: effectd config check <file>, or effectd config schema, or effectd config settings${action ? ` (not "${action}")` : ''}`);
    if (!file) throw new Error('which file? effectd config check <effectd.config.mjs|.json>');
    if (extra.length > 0) throw new Error(`one file at a time (also given: ${extra.join(' ')})`);
    const overrides: string[] = [];
    try {
      const config = loadConfig({ providerUrlVariables: loadSettings(env).providerUrls, user: await readConfigFile(file), onOverride: (line) => overrides.push(line) });
      const tools = new ToolRegistry(config);
      const sagas = configuredSagas(config, tools);
      console.log(`${file}: valid`);
      for (const line of [...overrides.map((o) => `override: ${o}`), ...configSummary(config, tools, sagas)]) console.log(line);
      return 0;
    } catch (error) {
      process.stderr.write(`effectd config check: ${file} is not valid:\n${(error as Error).message}\n`);
      return 1;
    }
  },
};
