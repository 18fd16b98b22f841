import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { packageRoot } from '../shared/package-root.js';
import { loadSettings } from '../config/settings-loader.js';
import { loadCredentials } from '../runtime/credentials.js';
import type { CommandSpec } from './cli-kit.js';

const ROLES = ['agent', 'operator'] as const;

export const tokenCommand: CommandSpec = {
  name: 'token',
  summary: 'Print the bearer token of the first credential with a role, for scripts: TOKEN=$(effectd token).',
  usage: 'effectd token [--role agent|operator] [--data-dir D]',
  options: { role: { type: 'string' }, 'data-dir': { type: 'string' } },
  optionHelp: [
    ['--role R', 'agent (default) or operator'],
    ['--data-dir D', 'reads <D>/credentials.json (default ./.effectd-dev if it exists, else ./.effectd); EFFECTD_CREDENTIALS names the file itself, as for effectd start'],
  ],
  async run(values, _positionals, env) {
    const settings = loadSettings(env, { dataDir: values['data-dir'] });
    const role = String(values.role ?? 'agent');
    if (!(ROLES as readonly string[]).includes(role)) throw new Error(`--role must be agent or operator, not "${role}"`);
    const dataDir = values['data-dir'] !== undefined ? resolve(String(values['data-dir'])) : defaultTokenDataDir();
    const file = settings.credentialsFile !== undefined ? resolve(settings.credentialsFile) : join(dataDir, 'credentials.json');
    if (!existsSync(file)) throw new Error(`no credentials file at ${file}: start effectd dev or effectd start first (or pass --data-dir, or set EFFECTD_CREDENTIALS)`);
    const found = loadCredentials(dataDir, file).credentials.find((c) => c.role === role);
    if (!found) throw new Error(`${file} has no ${role} credential`);
    process.stdout.write(`${found.token}\n`);
    return 0;
  },
};

/** The data dir `effectd token` reads without --data-dir. */
export function defaultTokenDataDir(): string {
  const dev = resolve('.effectd-dev');
  return existsSync(dev) ? dev : resolve('.effectd');
}

/**
 * How this effectd was invoked: `node bin/effectd.js` from its own clone, the project's own
 * `node_modules/.bin/effectd` from an installed package — never a bare `npx effectd`, which would
 * download and run whatever is published under that (unclaimed) name.
 */
export function cliInvocation(): string {
  const script = process.argv[1] ? resolve(process.argv[1]) : '';
  const root = packageRoot();
  if (script === join(root, 'bin', 'effectd.js') && resolve(process.cwd()) === root) return 'node bin/effectd.js';
  return 'node_modules/.bin/effectd';
}

/** The exact command that prints the token of this data dir's first credential with `role`. */
export function tokenCommandFor(dataDir: string, role: 'agent' | 'operator' = 'agent'): string {
  return `${cliInvocation()} token${dataDirFlag(dataDir)}${role === 'agent' ? '' : ` --role ${role}`}`;
}

/** ` --data-dir D` for a CLI command that finds credentials as `effectd token` does; empty when D is where it looks anyway. */
export function dataDirFlag(dataDir: string): string {
  return resolve(dataDir) === defaultTokenDataDir() ? '' : ` --data-dir ${shellPath(dataDir)}`;
}

/** The agent's token into $TOKEN, for a banner or a start-up line. */
export function tokenCommandLine(dataDir: string): string {
  return `TOKEN=$(${tokenCommandFor(dataDir)})`;
}

/** What start says about the credentials: where they are, whether this start created them, how to get a token. Never a token. `named`: EFFECTD_CREDENTIALS named the file. */
export function credentialsLine(credentialsFile: { file: string; created: boolean }, dataDir: string, named: boolean): string {
  const how = named ? `EFFECTD_CREDENTIALS=${quoted(credentialsFile.file)} ${cliInvocation()} token` : tokenCommandLine(dataDir);
  return credentialsFile.created
    ? `credentials: ${credentialsFile.file} (created now: one agent and one operator token, file mode 0600; an agent token: ${how})`
    : `credentials: ${credentialsFile.file} (an agent token: ${how})`;
}

/** A directory as a user would type it in a shell here: relative when inside the working directory, quoted when it must be. */
export function shellPath(dir: string): string {
  return quoted(relativeIfInside(dir));
}

function relativeIfInside(dir: string): string {
  const rel = relative(process.cwd(), resolve(dir));
  return rel && !rel.startsWith('..') && !rel.startsWith('/') ? rel : resolve(dir);
}

function quoted(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
