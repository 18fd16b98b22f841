import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { EffectdError } from '../core/errors.js';

/**
 * effectd's data dir holds the ledger (every argument of every effect), the read side's snapshot,
 * the server secret and the bearer tokens: the directory is 0700 and every file in it 0600.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** Creates `dir` (0700), or takes group and other permissions away from it; says what to do when it can't. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir, PRIVATE_DIR_MODE, 'data directory');
}

/**
 * Refuses a file effectd is given and did not write (credentials, the secret) when group or others
 * have any access to it: effectd does not loosen or fix what an operator provided, it says how.
 */
export function refuseSharedFile(file: string, what: string): void {
  const mode = statSync(file).mode;
  if ((mode & 0o077) !== 0) {
    throw new EffectdError('invalid_config', `${file} (${what}) is accessible to other users (mode ${octal(mode)}); it must be readable by effectd's user only: run  chmod 600 ${file}  and start again`);
  }
}

function tighten(path: string, mode: number, what: string): void {
  const current = statSync(path).mode;
  if ((current & 0o077) === 0) return;
  try {
    chmodSync(path, current & mode);
  } catch (error) {
    throw new EffectdError('invalid_config', `${path} (effectd's ${what}) is accessible to other users (mode ${octal(current)}) and effectd cannot change that (${(error as Error).message}): run  chmod ${octal(mode).slice(1)} ${path}  as its owner`, {}, { cause: error });
  }
}
