import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, refuseSharedFile } from './private-files.js';
import { EffectdError } from '../core/errors.js';

export interface SecretSource {
  secret: Buffer;
  /** Where it came from, for the start-up banner (never the value). */
  origin: string;
}

/**
 * The server secret that keys every effectId and provider key. Production: `given`, EFFECTD_SECRET
 * (Settings.secret: hex or base64, at least 32 bytes). Embedded default: `<dataDir>/secret`,
 * generated once with mode 0600. Never from the caller.
 */
export function loadSecret(dataDir: string, given?: string): SecretSource {
  const fromEnv = given;
  if (fromEnv) {
    const text = fromEnv.trim();
    const hex = /^[0-9a-f]+$/i.test(text) && text.length % 2 === 0;
    if (!hex && !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
      throw new EffectdError('invalid_config', 'EFFECTD_SECRET is neither hex nor base64 (a passphrase is not a key); generate one with: openssl rand -hex 32');
    }
    const secret = hex ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
    if (secret.length < 32) throw new EffectdError('invalid_config', `EFFECTD_SECRET holds ${secret.length} bytes; it must hold at least 32 (64 hex characters); generate one with: openssl rand -hex 32`);
    refuseWeakSecret(secret, 'EFFECTD_SECRET');
    return { secret, origin: 'EFFECTD_SECRET' };
  }
  const file = join(dataDir, 'secret');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  }
  refuseSharedFile(file, 'the server secret: whoever reads it can forge effect ids and provider keys');
  const text = readFileSync(file, 'utf8').trim();
  const secret = /^[0-9a-f]*$/i.test(text) && text.length % 2 === 0 ? Buffer.from(text, 'hex') : Buffer.alloc(0);
  if (secret.length < 32) throw new EffectdError('invalid_config', `${file} is damaged (not at least 32 bytes of hex); restore it from backup — effect ids depend on it`);
  refuseWeakSecret(secret, file);
  return { secret, origin: file };
}

/**
 * A placeholder (all zeros, one byte repeated, a short pattern) is not a secret: anyone could
 * derive the effect ids and provider keys. 32 random bytes show 20 or more distinct values with
 * overwhelming probability; fewer than 16 means the secret was not generated.
 */
function refuseWeakSecret(secret: Buffer, origin: string): void {
  const distinct = new Set(secret).size;
  if (distinct < 16) {
    throw new EffectdError('invalid_config', `${origin} is not a random secret (its ${secret.length} bytes take only ${distinct} distinct value${distinct === 1 ? '' : 's'}, e.g. all zeros); generate one with: openssl rand -hex 32${origin === 'EFFECTD_SECRET' ? '' : ` — but if effects were recorded with it, their ids depend on it: rotate only with a fresh ledger`}`);
  }
}
