import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyDispatch } from '../../src/core/classify.js';
import { NO_SECRETS, providerKeyTag, redactSecrets, REDACTED, secretSet } from '../../src/core/secret-redaction.js';
import { providerSecrets } from '../../src/providers/provider-secrets.js';
import type { ProviderSpec } from '../../src/config/tool-contract.js';

/**
 * The redaction boundary's pure function (src/core/secret-redaction.ts): whatever shape a provider
 * quotes a secret in, the redacted text holds no form of it. The end-to-end property (a real
 * provider, every output channel) is test/int/secret-redaction.int.spec.ts.
 */
const CHARS = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', ...'"\\/+=%&<>:@!#$\'()*,;?[]^_`{|}~-', ' ', 'é', 'ü'];
const secretArb = fc.string({ unit: fc.constantFrom(...CHARS), minLength: 10, maxLength: 40 }).map((s) => s.trim()).filter((s) => s.length >= 10);

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** What a provider might answer around a secret: the shapes of echoes seen in the wild. */
const shapes: Record<string, (secret: string, filler: string) => string> = {
  raw: (s, f) => `${f}${s}${f}`,
  json: (s, f) => JSON.stringify({ headers: { authorization: `Bearer ${s}` }, note: f }),
  jsonInJson: (s, f) => JSON.stringify({ error: JSON.stringify({ headers: { 'x-api-key': s } }), note: f }),
  asciiJson: (s, f) => `{"key":"${JSON.stringify(s).slice(1, -1).replace(/\//g, '\\/').replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}","f":"${f}"}`,
  html: (s, f) => `<html><body><pre>x-api-key: ${s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')}</pre>${f}</body></html>`,
  urlEncoded: (s, f) => `GET /v1/x?api_key=${encodeURIComponent(s)}&f=${f}`,
  formEncoded: (s, f) => `${new URLSearchParams({ token: s, f })}`,
  base64Dump: (s, f) => `{"debug":"${b64(`${f}x-api-key: ${s}\n`)}"}`,
  base64UrlDump: (s, f) => b64(`${f}${s}`).replace(/\+/g, '-').replace(/\//g, '_'),
};

/** Every form of the secret a reader could decode from the text (what must not be left). */
function leaks(text: string, secret: string): string[] {
  const forms = [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)];
  const found = forms.filter((form) => text.includes(form));
  // Decoding every base64 run of the text must not give the secret back either.
  for (const run of text.match(/[A-Za-z0-9+/_-]{12,}={0,2}/g) ?? []) {
    for (let start = 0; start < 4; start++) {
      const decoded = Buffer.from(run.slice(start).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
      if (decoded.includes(secret)) found.push(`base64 ${run}`);
    }
  }
  return found;
}

describe('redactSecrets: no configured secret survives in any shape a provider quotes it in', () => {
  it('property: every shape, any filler, several secrets at once', () => {
    fc.assert(fc.property(fc.array(secretArb, { minLength: 1, maxLength: 4 }), fc.constantFrom(...Object.keys(shapes)), fc.string({ maxLength: 20 }), (secrets, shape, filler) => {
      const set = secretSet(secrets);
      for (const secret of secrets) {
        const text = shapes[shape]!(secret, filler);
        const out = redactSecrets(text, set);
        expect(leaks(out, secret), `${shape}: ${JSON.stringify(text)} → ${JSON.stringify(out)}`).toEqual([]);
        expect(out).toContain(REDACTED);
      }
    }), { numRuns: 400 });
  });

  it('property: the provider key becomes its short tag, in any text', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.string({ maxLength: 40 }), (mac, filler) => {
      const key = `efd-${Buffer.from(mac).toString('base64url')}`;
      const out = redactSecrets(`${filler}Idempotency-Key: ${key}; again ${JSON.stringify({ key })}${filler}`, NO_SECRETS, key);
      expect(out).not.toContain(key);
      expect(out).toContain(providerKeyTag(key));
      expect(providerKeyTag(key)).toBe(`[provider key ${key.slice(0, 8)}…]`);
    }));
  });

  it('a URL keeps its host and path but not its user and password', () => {
    expect(redactSecrets('checked: asked GET http://user:pa55word@127.0.0.1:9/v1/x?ref=1, saw HTTP 500', NO_SECRETS)).toBe('checked: asked GET http://127.0.0.1:9/v1/x?ref=1, saw HTTP 500');
    expect(redactSecrets('see https://sk_live_abc@api.example.com/v1 and mailto:ops@example.com', NO_SECRETS)).toBe('see https://api.example.com/v1 and mailto:ops@example.com');
  });

  it('leaves ordinary text alone, and does not search for values too short to be credentials', () => {
    const set = secretSet(['abc', 'Bearer-s3cr3t-value']);
    expect(redactSecrets('HTTP 400: abc is not a valid amount', set)).toBe('HTTP 400: abc is not a valid amount');
    expect(redactSecrets('HTTP 401: bad token Bearer-s3cr3t-value', set)).toBe(`HTTP 401: bad token ${REDACTED}`);
  });
});

describe('classifyDispatch with the boundary: redacted before the reason is cut to length', () => {
  it('property: a secret straddling the 300-character cut leaves no part of itself behind', () => {
    const plain = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 16, maxLength: 40 });
    fc.assert(fc.property(plain, fc.nat(), (secret, at) => {
      const cut = 1 + (at % (secret.length - 1));
      const body = `${'.'.repeat(300 - cut)}${secret}${'.'.repeat(50)}`;
      const set = secretSet([secret]);
      const { reason } = classifyDispatch({ kind: 'response', status: 400, headers: {}, body, latencyMs: 1 }, {}, (text) => redactSecrets(text, set));
      for (let n = 6; n <= secret.length; n++) expect(reason).not.toContain(secret.slice(0, n));
      // Without the boundary the cut leaves the secret's first part in the reason: what this guards against.
      const bare = classifyDispatch({ kind: 'response', status: 400, headers: {}, body, latencyMs: 1 }, {}).reason;
      if (cut >= 6) expect(bare).toContain(secret.slice(0, cut));
    }));
  });

  it('the errors of a request without an answer are redacted too; an override still matches the answer as it came', () => {
    const set = secretSet(['tok-0123456789']);
    const redact = (text: string) => redactSecrets(text, set);
    expect(classifyDispatch({ kind: 'lost', error: 'socket closed after Bearer tok-0123456789', latencyMs: 1 }, {}, redact).reason).toBe(`no answer: socket closed after Bearer ${REDACTED}`);
    const rules = { overrides: [{ status: 200, bodyIncludes: 'tok-0123456789', outcome: 'failed_before_effect' as const }] };
    const classified = classifyDispatch({ kind: 'response', status: 200, headers: {}, body: { error: 'bad key tok-0123456789' }, latencyMs: 1 }, rules, redact);
    expect(classified).toMatchObject({ outcome: 'failed_before_effect', reason: `HTTP 200 (failed_before_effect by the tool's contract): {"error":"bad key ${REDACTED}"}` });
  });
});

describe('providerSecrets: what a configuration gives its providers', () => {
  it('header values, scheme tokens, Basic credentials, URL user and password, credential-named values, query parameters, MCP headers, env and arguments', () => {
    const providers: Record<string, ProviderSpec> = {
      a: {
        baseUrl: 'http://svc-user-name:p%40ss-w0rd@127.0.0.1:1/v1?api_key=qk-123456&region=eu',
        headers: { Authorization: 'Bearer tok-abcdef', 'X-Api-Key': 'k123', 'X-Tenant': 'acme-production', Accept: 'application/json', 'X-Short': 'eu' },
        values: { account: 'acct_1', apiToken: 'val-token-1' },
      },
      b: { baseUrl: 'http://127.0.0.1:2', headers: { Authorization: `Basic ${b64('basic-user-1:basic-pass')}` }, values: {} },
      c: { mcp: { url: 'http://127.0.0.1:3/mcp', headers: { 'X-Upstream-Token': 'mcp-header-tok' } }, values: {} },
      d: { mcp: { command: 'node', args: ['server.js', '--api-key', 'arg-key-123', '--token=arg-tok-456', '--verbose'], env: { UPSTREAM_SECRET: 'env-secret-1', PATH: '/usr/bin:/bin' } }, values: {} },
    };
    const secrets = providerSecrets(providers);
    for (const expected of ['Bearer tok-abcdef', 'tok-abcdef', 'k123', 'acme-production', 'svc-user-name', 'p%40ss-w0rd', 'p@ss-w0rd', 'svc-user-name:p@ss-w0rd', b64('svc-user-name:p@ss-w0rd'), 'qk-123456', 'val-token-1',
      'basic-user-1:basic-pass', 'basic-pass', 'basic-user-1', 'mcp-header-tok', 'arg-key-123', 'arg-tok-456', 'env-secret-1']) {
      expect(secrets, expected).toContain(expected);
    }
    for (const plain of ['application/json', 'eu', 'acct_1', '/usr/bin:/bin', 'server.js']) expect(secrets, plain).not.toContain(plain);
  });
});
