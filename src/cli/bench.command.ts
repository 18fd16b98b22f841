import { BENCH_FLAGS } from './bench-flags.js';
import type { CommandSpec } from './cli-kit.js';

/**
 * The benchmark is not part of the service: it is the private workspace packages/bench of effectd's
 * repository (never published; the service never imports it). `effectd bench` runs it when it is
 * there, through this package name (npm links the workspace into node_modules), and otherwise says
 * how to get it.
 */
export const BENCH_PACKAGE = '@effectd/bench';

/** How to get the benchmark, printed when it is not there. */
export const BENCH_HOW_TO = [
  'the adversarial benchmark is not part of this installation: it is a private workspace of effectd\'s repository (packages/bench), never published. To run it, from a clone of the repository:',
  '  npm install',
  '  npm run bench -- --quick        (or npx effectd bench --quick; npm run bench runs the full matrix)',
].join('\n');

/** Loads a module by its specifier; injectable, so a test can play an installation without the benchmark. */
export type ModuleImporter = (specifier: string) => Promise<unknown>;

const importModule: ModuleImporter = (specifier) => import(specifier);

/**
 * The benchmark's command when the workspace is installed and built; otherwise a command with the
 * same flags that prints how to get it (exit 2). A benchmark that is there but fails to load (not
 * built, or broken) is said as such.
 */
export async function loadBenchCommand(importer: ModuleImporter = importModule): Promise<CommandSpec> {
  let loaded: { benchCommand?: CommandSpec };
  try {
    loaded = (await importer(BENCH_PACKAGE)) as { benchCommand?: CommandSpec };
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (code === 'ERR_MODULE_NOT_FOUND' && message?.includes(`'${BENCH_PACKAGE}'`)) return absentCommand(BENCH_HOW_TO);
    const unbuilt = code === 'ERR_MODULE_NOT_FOUND' ? ' (is it built? npm run build builds the service and its workspaces)' : '';
    return absentCommand(`the benchmark workspace (${BENCH_PACKAGE}, packages/bench) is installed but did not load${unbuilt}: ${message ?? String(error)}`);
  }
  if (!loaded.benchCommand) return absentCommand(`${BENCH_PACKAGE} exports no benchCommand: is packages/bench from another version of effectd? Run npm install and npm run build.`);
  return loaded.benchCommand;
}

function absentCommand(why: string): CommandSpec {
  return {
    name: 'bench',
    summary: 'The adversarial benchmark (a private workspace of the repository; not in this installation: effectd bench --help says how to get it).',
    usage: 'effectd bench [options]',
    options: BENCH_FLAGS,
    optionHelp: [['(none here)', why.replaceAll('\n', '\n    ')]],
    run() {
      process.stderr.write(`effectd bench: ${why}\n`);
      return Promise.resolve(2);
    },
  };
}

export const benchCommand: CommandSpec = await loadBenchCommand();
