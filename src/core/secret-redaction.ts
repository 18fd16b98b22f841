/**
 * Secrets out of every text derived from a provider exchange (issue 27, rule 1). A provider may
 * quote what it was sent: a debug gateway echoes the request headers, a WAF page prints them, an
 * API quotes "the bad key", a library error prints the URL with its password. Whatever a provider
 * answered becomes an attempt's reason or a check's evidence, and from there the agent's answer,
 * the ledger, the timelines, the console and the logs. So every such text passes through
 * `redactSecrets` before it is recorded (src/shell/shell-core.ts, ShellCore.exchangeText):
 *
 * - every configured secret (src/providers/provider-secrets.ts collects them from the loaded
 *   providers: header values, URL user and password, credential-named values, an MCP upstream's
 *   headers and credential-named environment) becomes `[redacted]`, in each form a text may quote
 *   it in: as it is, JSON-escaped (once and twice), with `/` and non-ASCII escaped, HTML-escaped,
 *   percent-encoded (upper or lower hex, `+` for a space) and base64 (standard and URL-safe, at any
 *   alignment inside a longer encoded text: HTTP Basic credentials are base64 of `user:password`);
 * - the effect's provider key becomes `[provider key efd-AbCd…]`, its first 8 characters (as
 *   `effectd workflow` abridges it), so an operator can tell which attempt it was without the key
 *   itself; the full key stays where the lifecycle needs it, the attempt's `providerKey`;
 * - a URL's user and password (`https://user:pass@host`) are left out, whatever URL it is.
 *
 * A caller that truncates redacts first (a secret cut in two by the cut is no longer a whole form).
 * Pure: no I/O, no clock; the compiled set is immutable.
 */

export const REDACTED = '[redacted]';

/** A form shorter than this is never searched for: it would blank ordinary words. */
const MIN_FORM = 4;
/** A partial base64 form (a secret inside a longer encoded text) is searched for from this length. */
const MIN_BASE64_PART = 8;

/** The configured secrets, compiled once (when the tool registry is built) into one search. */
export interface SecretSet {
  /** Every form of every secret, longest first, as one alternation; undefined when there are none. */
  readonly pattern: RegExp | undefined;
  /** How many secrets it was built from (for a start-up line or a test; never their values). */
  readonly size: number;
}

export const NO_SECRETS: SecretSet = Object.freeze({ pattern: undefined, size: 0 });

/** Compiles secret values (duplicates and values too short to search for are dropped). */
export function secretSet(values: Iterable<string>): SecretSet {
  const secrets = new Set<string>();
  for (const value of values) if (value.length >= MIN_FORM) secrets.add(value);
  if (secrets.size === 0) return NO_SECRETS;
  const forms = new Set<string>();
  for (const secret of secrets) for (const form of formsOf(secret)) forms.add(form);
  const alternation = [...forms].sort((a, b) => b.length - a.length || (a < b ? -1 : 1)).map(escapeRegExp).join('|');
  return Object.freeze({ pattern: new RegExp(alternation, 'g'), size: secrets.size });
}

/** The short form of a provider key a text may carry: enough to correlate with the attempt, never the key. */
export function providerKeyTag(key: string): string {
  return `[provider key ${key.slice(0, 8)}…]`;
}

/**
 * `text` with every form of every secret of `secrets` blanked, the provider key (when given)
 * replaced by its tag, and the user and password of any URL in it left out.
 */
export function redactSecrets(text: string, secrets: SecretSet, providerKey?: string | null): string {
  if (text.length < MIN_FORM) return text;
  let out = text;
  if (providerKey && providerKey.length >= MIN_FORM) {
    let tag: string | undefined;
    for (const form of keyFormsOf(providerKey)) if (out.includes(form)) out = out.split(form).join((tag ??= providerKeyTag(providerKey)));
  }
  if (secrets.pattern) out = out.replace(secrets.pattern, REDACTED);
  if (out.includes('://')) out = out.replace(URL_USERINFO, '$1');
  return out;
}

/** `scheme://user:password@` → `scheme://`: the userinfo of any URL in a text. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>\\]*@/gi;

/** Provider keys are per effect: their forms are computed on use, kept for the next text about the same effect. Bounded: cleared when full. */
const keyForms = new Map<string, readonly string[]>();
function keyFormsOf(key: string): readonly string[] {
  let forms = keyForms.get(key);
  if (!forms) {
    if (keyForms.size >= 1_000) keyForms.clear();
    forms = [...formsOf(key)].sort((a, b) => b.length - a.length);
    keyForms.set(key, forms);
  }
  return forms;
}

/** Every form a text may quote `secret` in (each at least MIN_FORM long). */
function formsOf(secret: string): Set<string> {
  const forms = new Set<string>();
  const add = (form: string | undefined) => {
    if (form !== undefined && form.length >= MIN_FORM) forms.add(form);
  };
  const json = jsonEscaped(secret);
  const textual = [secret, json, jsonEscaped(json), asciiJsonEscaped(secret), htmlEscaped(secret), htmlEscaped(json)];
  for (const form of textual) add(form);
  const uri = percentEncoded(secret);
  if (uri !== undefined) {
    add(uri);
    add(lowerHex(uri));
    // application/x-www-form-urlencoded (URLSearchParams): a space is `+`, and !'()~* are escaped too.
    const form = new URLSearchParams({ s: secret }).toString().slice(2);
    add(form);
    add(lowerHex(form));
  }
  // base64 of the secret, and of its JSON-escaped form (an encoded JSON dump of the headers).
  for (const form of new Set([secret, json])) for (const encoded of base64Forms(form)) add(encoded);
  return forms;
}

function jsonEscaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** As encoders that escape `/` and everything outside ASCII do (PHP, Python's json.dumps). */
function asciiJsonEscaped(text: string): string {
  return jsonEscaped(text).replace(/\//g, '\\/').replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function htmlEscaped(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function percentEncoded(text: string): string | undefined {
  try {
    return encodeURIComponent(text);
  } catch {
    return undefined; // a lone surrogate: no URL carries it
  }
}

function lowerHex(encoded: string): string {
  return encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

/**
 * The base64 of `text` as a whole (padded and not), and, for each of the three alignments it can
 * have inside a longer encoded text, the run of characters that depends on its bytes alone.
 */
function base64Forms(text: string): string[] {
  const bytes = new TextEncoder().encode(text);
  const forms: string[] = [];
  const whole = toBase64(bytes);
  forms.push(whole, whole.replace(/=+$/, ''));
  for (let offset = 0; offset < 3; offset++) {
    const shifted = new Uint8Array(offset + bytes.length);
    shifted.set(bytes, offset);
    const encoded = toBase64(shifted);
    // Drop the group shared with the bytes before it and the group shared with the bytes after it.
    const part = encoded.slice(offset === 0 ? 0 : 4, Math.floor(shifted.length / 3) * 4);
    if (part.length >= MIN_BASE64_PART) forms.push(part);
  }
  return forms.flatMap((form) => [form, form.replace(/\+/g, '-').replace(/\//g, '_')]);
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 with padding (no Buffer: the core imports nothing but zod and node:crypto). */
function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i]!;
    const b = bytes[i + 1];
    const c = bytes[i + 2];
    out += BASE64[a >> 2]! + BASE64[((a & 3) << 4) | ((b ?? 0) >> 4)]!;
    out += b === undefined ? '=' : BASE64[((b & 15) << 2) | ((c ?? 0) >> 6)]!;
    out += c === undefined ? '=' : BASE64[c & 63]!;
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
