import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodedError } from './coded-error.js';

/**
 * effectd's package root (where its package.json is), from src/ under vitest, dist/src/ when
 * compiled, or a workspace's own compile of these modules (the private benchmark, packages/bench,
 * compiles the service modules it imports into its dist/): the nearest directory up whose
 * package.json is effectd's, so a workspace's package.json on the way is passed by.
 */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!isEffectdRoot(dir)) {
    const parent = dirname(dir);
    if (parent === dir) throw new CodedError('internal', 'effectd: cannot find its package root');
    dir = parent;
  }
  return dir;
}

function isEffectdRoot(dir: string): boolean {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'effectd';
  } catch {
    return false;
  }
}
