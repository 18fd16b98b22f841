// `effectd bench` without the benchmark (an installation from the tarball: the private workspace
// packages/bench is not there) answers how to get it, parses the benchmark's flags all the same, and
// a benchmark that is there but does not load is said as such.
import { describe, expect, it, vi } from 'vitest';
import { BENCH_PACKAGE, loadBenchCommand } from '../../src/cli/bench.command.js';
import { parseCommand } from '../../src/cli/cli-kit.js';

/** What Node's ESM loader throws for a package that is not installed. */
function notInstalled(specifier: string): Error {
  return Object.assign(new Error(`Cannot find package '${specifier}' imported from /x/node_modules/effectd/dist/src/cli/bench.command.js`), { code: 'ERR_MODULE_NOT_FOUND' });
}

describe('effectd bench loads the private benchmark workspace', () => {
  it('without it: the same flags parse, and running says how to get it (exit 2)', async () => {
    const command = await loadBenchCommand((specifier) => Promise.reject(notInstalled(specifier)));
    const parsed = parseCommand(command, ['--quick', '--fault', 'after-mutation', '--no-kafka']);
    expect(parsed).not.toBe('help');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await command.run(parsed === 'help' ? {} : parsed.values, [], {})).toBe(2);
      const said = stderr.mock.calls.map(([text]) => String(text)).join('');
      expect(said).toMatch(/not part of this installation/);
      expect(said).toMatch(/packages\/bench/);
      expect(said).toMatch(/npm install\n\s+npm run bench -- --quick/);
    } finally {
      stderr.mockRestore();
    }
  });

  it('there but not built: says so, with how to build it', async () => {
    const unbuilt = Object.assign(new Error('Cannot find module \'/repo/packages/bench/dist/packages/bench/src/index.js\' imported from /repo/dist/src/cli/bench.command.js'), { code: 'ERR_MODULE_NOT_FOUND' });
    const command = await loadBenchCommand(() => Promise.reject(unbuilt));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await command.run({}, [], {})).toBe(2);
      expect(stderr.mock.calls.map(([text]) => String(text)).join('')).toMatch(/installed but did not load \(is it built\? npm run build/);
    } finally {
      stderr.mockRestore();
    }
  });

  it('with it: the benchmark\'s own command, loaded by its package name', async () => {
    const benchCommand = { name: 'bench', summary: 's', usage: 'u', options: {}, optionHelp: [], run: () => Promise.resolve(0) };
    const asked: string[] = [];
    const command = await loadBenchCommand((specifier) => (asked.push(specifier), Promise.resolve({ benchCommand })));
    expect(asked).toEqual([BENCH_PACKAGE]);
    expect(command).toBe(benchCommand);
  });
});
