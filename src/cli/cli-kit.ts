import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Environment } from '../config/settings-loader.js';

export interface CommandSpec {
  name: string;
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** One line per option, printed by --help. */
  optionHelp: [string, string][];
  /**
   * `env`: the process's environment, handed over by src/cli/main.ts (the one place that reads it);
   * a command turns it into Settings with loadSettings(env, its flags) and passes those down.
   */
  run(values: Record<string, string | boolean | undefined>, positionals: string[], env: Environment): Promise<number>;
}

export function helpText(command: CommandSpec): string {
  const width = Math.max(...command.optionHelp.map(([flag]) => flag.length), 10);
  const options = command.optionHelp.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`).join('\n');
  return `${command.summary}\n\nUsage: ${command.usage}\n\nOptions:\n${options}\n  ${'-h, --help'.padEnd(width)}  Show this help\n`;
}

/** Parses a command's flags; unknown flags fail with the command's help, as a user would want. */
export function parseCommand(command: CommandSpec, argv: string[]): { values: Record<string, string | boolean | undefined>; positionals: string[] } | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's own message talks about positional arguments; say what is wrong in this command's terms.
    const code = (error as { code?: string }).code;
    const flag = /'(-[^']*)'/.exec((error as Error).message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new Error(`unknown option ${flag ?? ''}; the options of effectd ${command.name} are below`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new Error(`${flag ?? 'an option'} ${/argument missing/.test((error as Error).message) ? 'needs a value' : 'takes no value'}; see the options below`);
    throw error;
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  return { values: values as Record<string, string | boolean | undefined>, positionals };
}

export function portOption(value: string | boolean | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port must be a number from 0 to 65535, not "${value}"`);
  return port;
}
