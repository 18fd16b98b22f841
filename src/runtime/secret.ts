import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SecretSource {
  secret: Buffer;
  /** Where it came from, for the start-up banner (never the value). */
  origin: string;
}

/**
 * The server secret that keys every effectId and provider key. Production: EFFECTD_SECRET (hex or
 * base64, at least 32 bytes). Embedded default: `<dataDir>/secret`, generated once with mode 0600.
 * Never from the caller.
 */
export function loadSecret(dataDir: string, env: NodeJS.ProcessEnv = process.env): SecretSource {
  const fromEnv = env.EFFECTD_SECRET;
  if (fromEnv) {
    const secret = /^[0-9a-f]+$/i.test(fromEnv) && fromEnv.length % 2 === 0 ? Buffer.from(fromEnv, 'hex') : Buffer.from(fromEnv, 'base64');
    if (secret.length < 32) throw new Error('EFFECTD_SECRET must hold at least 32 bytes (64 hex characters); generate one with: openssl rand -hex 32');
    return { secret, origin: 'EFFECTD_SECRET' };
  }
  const file = join(dataDir, 'secret');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  if (secret.length < 32) throw new Error(`${file} is damaged (fewer than 32 bytes); restore it from backup — effect ids depend on it`);
  return { secret, origin: file };
}
