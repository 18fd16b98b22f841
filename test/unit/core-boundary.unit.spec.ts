import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The domain core has no I/O: no framework, driver, network, file or process imports (docs/design.md, "Layout"). */
const FORBIDDEN = /from '(@nestjs\/[^']*|kafkajs|pg|prom-client|better-sqlite3|@kurrent\/[^']*|express|node:(fs|http|https|net|child_process|dgram|worker_threads)|fs|http|net)'/;
const ADAPTERS = /from '\.\.?\/(\.\.\/)*(ledger|shell|api|transport|providers|runtime|metrics|cli|simulators|bench|sdk|harness)\//;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the domain core', () => {
  const files = filesUnder('src/core');
  it.each(files)('%s imports no I/O and no adapter', (file) => {
    const imports = readFileSync(file, 'utf8').split('\n').filter((line) => line.startsWith('import '));
    expect(imports.filter((line) => FORBIDDEN.test(line))).toEqual([]);
    expect(imports.filter((line) => ADAPTERS.test(line))).toEqual([]);
  });
});
