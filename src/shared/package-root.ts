import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodedError } from './coded-error.js';

/** The repository root (where package.json is), from src/ under vitest or dist/src/ when compiled. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new CodedError('internal', 'effectd: cannot find its package root');
    dir = parent;
  }
  return dir;
}
