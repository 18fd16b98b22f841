import { isMcpProvider, type ProviderSpec } from '../config/tool-contract.js';

/**
 * The secret values a configuration gives its providers: what src/core/secret-redaction.ts blanks
 * in every text derived from a provider exchange (docs/tool-reference.md, "Secrets in provider
 * answers"). Collected from the loaded providers (after URL overrides), all of them, used or not:
 *
 * - every header value (HTTP providers' `headers`, an MCP upstream's `mcp.headers`) but those of
 *   content negotiation (`accept`, `content-type`, …); a header named like a credential
 *   (authorization, *key*, *token*, *secret*, cookie, …) from 4 characters, any other from 8;
 *   the token after an auth scheme (`Bearer t`), and for `Basic` the decoded `user:password`
 *   and its password;
 * - a URL's user and password (as written and percent-decoded), `user:password` and its base64
 *   (the Basic authorization effectd sends for it), and query parameters named like a credential;
 * - `values` named like a credential (a template may put them in a path or a body);
 * - an MCP child's environment variables and `--flag value` / `--flag=value` arguments named like a credential.
 */
export function providerSecrets(providers: Readonly<Record<string, ProviderSpec>>): string[] {
  const secrets: string[] = [];
  for (const provider of Object.values(providers)) {
    for (const [name, value] of Object.entries(provider.values)) if (CREDENTIAL_NAME.test(name)) secrets.push(...credential(value));
    if (!isMcpProvider(provider)) {
      secrets.push(...headerSecrets(provider.headers), ...urlSecrets(provider.baseUrl));
    } else if ('url' in provider.mcp) {
      secrets.push(...headerSecrets(provider.mcp.headers), ...urlSecrets(provider.mcp.url));
    } else {
      for (const [name, value] of Object.entries(provider.mcp.env ?? {})) if (CREDENTIAL_NAME.test(name)) secrets.push(...credential(value));
      secrets.push(...argumentSecrets(provider.mcp.args));
    }
  }
  return [...new Set(secrets)];
}

/** A name that says its value is a credential. */
const CREDENTIAL_NAME = /auth|key|token|secret|passw|pwd|cookie|session|signature|credential|bearer|private/i;
/** Headers whose values say how to talk, not who is talking. */
const PLAIN_HEADERS = new Set(['accept', 'accept-encoding', 'accept-language', 'content-type', 'content-language', 'cache-control', 'connection', 'user-agent']);
/** Shortest credential searched for (a shorter one would blank ordinary words); a value not named as a credential counts from 8. */
const MIN_CREDENTIAL = 4;
const MIN_OTHER = 8;

function credential(value: string, min = MIN_CREDENTIAL): string[] {
  return value.length >= min ? [value] : [];
}

function headerSecrets(headers: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (const [name, raw] of Object.entries(headers)) {
    const named = CREDENTIAL_NAME.test(name);
    if (!named && PLAIN_HEADERS.has(name.toLowerCase())) continue;
    const value = raw.trim();
    const min = named ? MIN_CREDENTIAL : MIN_OTHER;
    out.push(...credential(value, min));
    // `<scheme> <token>`: the token alone is what an answer quoting "the bad key" shows.
    const scheme = /^([A-Za-z][\w.-]*)\s+(\S.*)$/.exec(value);
    if (scheme) {
      out.push(...credential(scheme[2]!, min));
      if (scheme[1]!.toLowerCase() === 'basic') out.push(...basicSecrets(scheme[2]!));
    }
  }
  return out;
}

/** The `user:password` of a Basic credential, and its password (its user too, when it is long enough not to be a word). */
function basicSecrets(encoded: string): string[] {
  if (!/^[A-Za-z0-9+/=_-]+$/.test(encoded)) return [];
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return credential(decoded);
  return [...credential(decoded), ...credential(decoded.slice(colon + 1)), ...credential(decoded.slice(0, colon), MIN_OTHER)];
}

function urlSecrets(raw: string): string[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [];
  }
  const out: string[] = [];
  const user = safeDecode(url.username);
  const password = safeDecode(url.password);
  // A user without a password is the credential itself (Stripe's `sk_…:`); beside a password it counts from 8.
  const userMin = password ? MIN_OTHER : MIN_CREDENTIAL;
  out.push(...credential(url.username, userMin), ...credential(user, userMin), ...credential(url.password), ...credential(password));
  if (url.username || url.password) {
    // What src/providers/http-exchange.ts sends for them: `authorization: Basic base64(user:password)`.
    out.push(`${user}:${password}`, Buffer.from(`${user}:${password}`).toString('base64'));
  }
  for (const [name, value] of url.searchParams) if (CREDENTIAL_NAME.test(name)) out.push(...credential(value));
  return out;
}

function argumentSecrets(args: readonly string[]): string[] {
  const out: string[] = [];
  args.forEach((arg, i) => {
    const flag = /^--?([\w.-]+)(?:=(.*))?$/.exec(arg);
    if (!flag || !CREDENTIAL_NAME.test(flag[1]!)) return;
    const value = flag[2] ?? args[i + 1];
    if (value !== undefined) out.push(...credential(value));
  });
  return out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
