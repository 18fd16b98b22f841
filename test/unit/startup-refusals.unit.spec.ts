import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings-loader.js';
import { CredentialBook, loadCredentials, reloadCredentials } from '../../src/runtime/credentials.js';
import { loadSecret } from '../../src/runtime/secret.js';

/** Issue 13, item 8: what effectd used to accept silently at start is refused, saying what to fix. */

const dir = () => mkdtempSync(join(tmpdir(), 'effectd-refusals-'));
const token = (prefix = 'efd_agent') => `${prefix}_${randomBytes(24).toString('base64url')}`;

function credentialsFile(credentials: unknown[], mode = 0o600): string {
  const file = join(dir(), 'credentials.json');
  writeFileSync(file, JSON.stringify({ credentials }), { mode });
  chmodSync(file, mode);
  return file;
}

describe('credentials', () => {
  it('a token given to two credentials (here two roles) is refused, naming both', () => {
    const shared = token();
    const file = credentialsFile([
      { token: shared, role: 'agent', tenant: 'default', name: 'billing-agent' },
      { token: shared, role: 'operator', tenant: '*', name: 'ops' },
    ]);
    expect(() => loadCredentials('', file)).toThrow(/credentials\.1\.token: the same token as credentials\.0 \("billing-agent", agent, tenant default\) is given to "ops" \(operator, tenant \*\); every credential needs its own token/);
  });

  it('a name given to two credentials is refused: the ledger records the actor by name', () => {
    const file = credentialsFile([
      { token: token(), role: 'agent', tenant: 'default', name: 'billing-agent' },
      { token: token(), role: 'agent', tenant: 'other', name: 'billing-agent' },
    ]);
    expect(() => loadCredentials('', file)).toThrow(/credentials\.1\.name: the name "billing-agent" is already credentials\.0's/);
  });

  it('a file group or others can read is refused with the chmod to run', () => {
    const credentials = [{ token: token(), role: 'agent', tenant: 'default', name: 'a' }];
    for (const mode of [0o644, 0o640, 0o604]) {
      const file = credentialsFile(credentials, mode);
      expect(() => loadCredentials('', file)).toThrow(new RegExp(`is accessible to other users \\(mode 0${mode.toString(8)}\\).*chmod 600 ${file.replace(/[.]/g, '\\.')}`));
    }
    expect(loadCredentials('', credentialsFile(credentials, 0o600)).credentials).toHaveLength(1);
    expect(loadCredentials('', credentialsFile(credentials, 0o400)).credentials).toHaveLength(1);
  });

  it('a reload (SIGHUP) refuses the same things and keeps the credentials it had', () => {
    const good = credentialsFile([{ token: token(), role: 'agent', tenant: 'default', name: 'a' }]);
    const book = new CredentialBook(loadCredentials('', good).credentials);
    const shared = token();
    const bad = credentialsFile([{ token: shared, role: 'agent', tenant: 't1', name: 'a' }, { token: shared, role: 'agent', tenant: 't2', name: 'b' }]);
    expect(() => reloadCredentials(book, bad)).toThrow(/the same token as credentials\.0/);
    expect(book.size).toBe(1);
  });

  it('the embedded default is written 0600 and accepted', () => {
    const data = dir();
    const loaded = loadCredentials(data);
    expect(loaded.created).toBe(true);
    expect(loaded.credentials.map((c) => c.role)).toEqual(['agent', 'operator']);
  });
});

describe('the server secret', () => {
  it('EFFECTD_SECRET: short, all-zero, a repeated pattern or neither hex nor base64 is refused', () => {
    expect(() => loadSecret(dir(), 'ab'.repeat(16))).toThrow(/EFFECTD_SECRET holds 16 bytes; it must hold at least 32.*openssl rand -hex 32/);
    expect(() => loadSecret(dir(), '00'.repeat(32))).toThrow(/EFFECTD_SECRET is not a random secret \(its 32 bytes take only 1 distinct value, e\.g\. all zeros\); generate one with: openssl rand -hex 32/);
    expect(() => loadSecret(dir(), '0123456789'.repeat(8))).toThrow(/not a random secret \(its 40 bytes take only 5 distinct values/);
    expect(() => loadSecret(dir(), 'correct horse battery staple, a long passphrase!')).toThrow(/EFFECTD_SECRET is neither hex nor base64/);
    const hex = randomBytes(32).toString('hex');
    expect(loadSecret(dir(), hex).secret).toEqual(Buffer.from(hex, 'hex'));
    const base64 = randomBytes(48).toString('base64');
    expect(loadSecret(dir(), base64).secret).toEqual(Buffer.from(base64, 'base64'));
  });

  it('the secret file: generated 0600 and accepted; all-zero, damaged or readable by others is refused', () => {
    const data = dir();
    const first = loadSecret(data);
    expect(loadSecret(data).secret).toEqual(first.secret);

    const zeros = dir();
    writeFileSync(join(zeros, 'secret'), '00'.repeat(32), { mode: 0o600 });
    expect(() => loadSecret(zeros)).toThrow(/secret is not a random secret \(its 32 bytes take only 1 distinct value/);

    const short = dir();
    writeFileSync(join(short, 'secret'), 'abcd', { mode: 0o600 });
    expect(() => loadSecret(short)).toThrow(/is damaged \(not at least 32 bytes of hex\)/);

    chmodSync(join(data, 'secret'), 0o644);
    expect(() => loadSecret(data)).toThrow(/secret \(the server secret: whoever reads it can forge effect ids and provider keys\) is accessible to other users \(mode 0644\).*chmod 600/);
  });
});

describe('HTTP limits from the environment', () => {
  const httpLimits = (env: Record<string, string>) => loadSettings(env).http;
  it('defaults: headers 10 s, request 30 s, keep-alive 5 s, 1024 connections', () => {
    expect(httpLimits({})).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_024 });
  });
  it('each is set by its variable; a non-positive or non-integer value, or headers over request, stops the start', () => {
    expect(httpLimits({ EFFECTD_HTTP_HEADERS_TIMEOUT_MS: '2000', EFFECTD_HTTP_REQUEST_TIMEOUT_MS: '4000', EFFECTD_HTTP_KEEPALIVE_TIMEOUT_MS: '1000', EFFECTD_HTTP_MAX_CONNECTIONS: '64' }))
      .toMatchObject({ headersTimeoutMs: 2_000, requestTimeoutMs: 4_000, keepAliveTimeoutMs: 1_000, maxConnections: 64 });
    expect(() => httpLimits({ EFFECTD_HTTP_MAX_CONNECTIONS: '0' })).toThrow(/EFFECTD_HTTP_MAX_CONNECTIONS must be a positive whole number, not "0"/);
    expect(() => httpLimits({ EFFECTD_HTTP_REQUEST_TIMEOUT_MS: '1.5' })).toThrow(/EFFECTD_HTTP_REQUEST_TIMEOUT_MS must be a positive whole number, not "1.5"/);
    expect(() => httpLimits({ EFFECTD_HTTP_REQUEST_TIMEOUT_MS: '5000' })).toThrow(/EFFECTD_HTTP_HEADERS_TIMEOUT_MS \(10000\) must not exceed EFFECTD_HTTP_REQUEST_TIMEOUT_MS \(5000\)/);
  });
});
