import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isEffectdError } from '../core/errors.js';
import { packageRoot } from '../providers/config-loader.js';
import { benchCommand } from './bench.command.js';
import { configCommand } from './config.command.js';
import { helpText, parseCommand, type CommandSpec } from './cli-kit.js';
import { demoCommand } from './demo.command.js';
import { devCommand } from './dev.command.js';
import { effectsCommand } from './effects.command.js';
import { mcpCommand } from './mcp.command.js';
import { resolveCommand } from './resolve.command.js';
import { startCommand } from './start.command.js';
import { tokenCommand } from './token.command.js';
import { workflowCommand } from './workflow.command.js';

const commands: CommandSpec[] = [startCommand, devCommand, tokenCommand, demoCommand, effectsCommand, workflowCommand, resolveCommand, configCommand, benchCommand, mcpCommand];

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

function overview(): string {
  const lines = commands.map((c) => `  ${c.name.padEnd(8)}  ${c.summary}`).join('\n');
  return `effectd — an effect gateway for AI agents: every declared effect happens at most once.\n\nUsage: effectd <command> [options]   (effectd --version prints the version)\n\nCommands:\n${lines}\n\nRun \`effectd <command> --help\` for a command's options.\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`effectd ${packageVersion()}\n`);
    return 0;
  }
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    const target = commands.find((c) => c.name === rest[0]);
    process.stdout.write(target ? helpText(target) : overview());
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`effectd: unknown command "${name}"\n\n${overview()}`);
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
  return command.run(parsed.values, parsed.positionals);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (isEffectdError(error) || error instanceof Error) process.stderr.write(`effectd: ${(error as Error).message}\n`);
    else process.stderr.write(`effectd: ${String(error)}\n`);
    process.exit(1);
  },
);
