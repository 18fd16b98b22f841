import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isEffectdError } from '../core/errors.js';
import { packageRoot } from '../shared/package-root.js';
import { helpText, parseCommand, type CommandSpec } from './cli-kit.js';

/**
 * Each command's module, loaded only when it runs (or for the overview): `effectd token` should not
 * pay for NestJS, kafkajs and the MCP SDK, which `start` needs.
 */
const commands: Record<string, () => Promise<CommandSpec>> = {
  start: async () => (await import('./start.command.js')).startCommand,
  dev: async () => (await import('./dev.command.js')).devCommand,
  token: async () => (await import('./token.command.js')).tokenCommand,
  demo: async () => (await import('./demo.command.js')).demoCommand,
  effects: async () => (await import('./effects.command.js')).effectsCommand,
  workflow: async () => (await import('./workflow.command.js')).workflowCommand,
  resolve: async () => (await import('./resolve.command.js')).resolveCommand,
  config: async () => (await import('./config.command.js')).configCommand,
  bench: async () => (await import('./bench.command.js')).benchCommand,
  mcp: async () => (await import('./mcp.command.js')).mcpCommand,
};

function commandNamed(name: string | undefined): Promise<CommandSpec> | undefined {
  return name !== undefined && Object.hasOwn(commands, name) ? commands[name]!() : undefined;
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

async function overview(): Promise<string> {
  const all = await Promise.all(Object.values(commands).map((load) => load()));
  const lines = all.map((c) => `  ${c.name.padEnd(8)}  ${c.summary}`).join('\n');
  return `effectd — an effect gateway for AI agents: every declared effect happens at most once.\n\nUsage: effectd <command> [options]   (effectd --version prints the version)\n\nCommands:\n${lines}\n\nRun \`effectd <command> --help\` for a command's options.\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`effectd ${packageVersion()}\n`);
    return 0;
  }
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    const target = await commandNamed(rest[0]);
    process.stdout.write(target ? helpText(target) : await overview());
    return 0;
  }
  const command = await commandNamed(name);
  if (!command) {
    process.stderr.write(`effectd: unknown command "${name}"\n\n${await overview()}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseCommand(command, rest);
  } catch (error) {
    process.stderr.write(`effectd ${name}: ${(error as Error).message}\n\n${helpText(command)}`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(helpText(command));
    return 0;
  }
  // The one read of the environment: each command loads its settings from it (src/config/settings-loader.ts).
  return command.run(parsed.values, parsed.positionals, process.env);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (isEffectdError(error) || error instanceof Error) process.stderr.write(`effectd: ${(error as Error).message}\n`);
    else process.stderr.write(`effectd: ${String(error)}\n`);
    process.exit(1);
  },
);
