import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, refuseSharedFile } from './private-files.js';
import { EffectdError } from '../core/errors.js';

/**
 * Who may call the API. Agents submit commands and read their own tenant's workflows; operators
 * also list and resolve escalated and terminal effects. Tenant `*` reaches every tenant.
 */
export const credential = z.object({
  token: z.string().min(24, 'tokens must be at least 24 characters').superRefine((token, ctx) => {
    const problem = weakTokenProblem(token);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  role: z.enum(['agent', 'operator']),
  tenant: z.string().min(1),
  name: z.string().min(1),
  /**
   * Kafka reply topics this credential may have outcomes written to, besides the ingress's own
   * outcomes topic: those starting with this prefix (as Kafka's PREFIXED ACLs match). End it with a
   * separator ("agents.billing.") so "agents.billing" does not also grant "agents.billing-evil".
   */
  replyTopicPrefix: z.string().regex(/^[a-zA-Z0-9._-]{1,248}$/, 'replyTopicPrefix must be the start of a Kafka topic name (letters, digits, . _ -)').optional(),
}).strict();
export type Credential = z.infer<typeof credential>;

/**
 * Why a token is too easy to guess, or undefined. A length is no strength: 24 times "a" is 24
 * characters. A random token of 24 or more characters (base64, hex) shows 9 or more distinct
 * characters with overwhelming probability, and does not repeat a short unit; fewer, or a unit
 * repeated ("abcabc…", "secretsecret…"), means it was typed, not generated.
 */
export function weakTokenProblem(token: string): string | undefined {
  const generate = 'generate one with: openssl rand -base64 32';
  const distinct = new Set(token).size;
  if (distinct < 6) return `the token is not random: its ${token.length} characters take only ${distinct} distinct value${distinct === 1 ? '' : 's'}, so it is easy to guess; ${generate}`;
  for (let unit = 1; unit <= token.length / 2; unit++) {
    if (token.length % unit === 0 && token.slice(0, unit).repeat(token.length / unit) === token) return `the token is not random: it repeats "${token.slice(0, Math.min(unit, 8))}${unit > 8 ? '…' : ''}" ${token.length / unit} times, so it is easy to guess; ${generate}`;
  }
  return undefined;
}
export type Principal = Omit<Credential, 'token'>;

const credentialsFile = z.object({ credentials: z.array(credential).min(1) }).strict().superRefine(({ credentials }, ctx) => {
  // One token, one principal: with a token listed twice the first match wins, and the other entry
  // (maybe another role or tenant) silently never applies.
  const byToken = new Map<string, number>();
  credentials.forEach((c, i) => {
    const first = byToken.get(c.token);
    if (first === undefined) {
      byToken.set(c.token, i);
      return;
    }
    const other = credentials[first]!;
    ctx.addIssue({
      code: 'custom', path: ['credentials', i, 'token'],
      message: `the same token as credentials.${first} ("${other.name}", ${other.role}, tenant ${other.tenant}) is given to "${c.name}" (${c.role}, tenant ${c.tenant}); every credential needs its own token — generate one with: openssl rand -base64 32`,
    });
  });
  // The ledger records who acted by name: two credentials under one name could not be told apart.
  const byName = new Map<string, number>();
  credentials.forEach((c, i) => {
    const first = byName.get(c.name);
    if (first === undefined) byName.set(c.name, i);
    else ctx.addIssue({ code: 'custom', path: ['credentials', i, 'name'], message: `the name "${c.name}" is already credentials.${first}'s; the ledger records the actor by name, so every credential needs its own` });
  });
});

export interface CredentialSource {
  credentials: Credential[];
  file: string;
  created: boolean;
}

/**
 * `file` (EFFECTD_CREDENTIALS, Settings.credentialsFile) names a file in production, which must
 * exist; without one the embedded default creates `<dataDir>/credentials.json` (mode 0600) on
 * first start with one agent and one operator.
 */
export function loadCredentials(dataDir: string, named?: string): CredentialSource {
  const file = named || join(dataDir, 'credentials.json');
  let created = false;
  if (!existsSync(file)) {
    if (named) throw new EffectdError('invalid_config', `EFFECTD_CREDENTIALS=${file} does not exist`);
    mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
    const token = (prefix: string) => `${prefix}_${randomBytes(24).toString('base64url')}`;
    const initial = { credentials: [
      { token: token('efd_agent'), role: 'agent', tenant: 'default', name: 'default-agent' },
      { token: token('efd_operator'), role: 'operator', tenant: '*', name: 'default-operator' },
    ] };
    writeFileSync(file, `${JSON.stringify(initial, null, 2)}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    created = true;
  }
  refuseSharedFile(file, 'bearer tokens');
  const parsed = credentialsFile.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new EffectdError('invalid_config', `${file} is not a valid credentials file: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return { credentials: parsed.data.credentials, file, created };
}

export class CredentialBook {
  constructor(private credentials: Credential[]) {}

  get size(): number {
    return this.credentials.length;
  }

  /** Replaces every credential at once (a rotation); requests already authenticated keep their principal. */
  reload(credentials: Credential[]): void {
    this.credentials = credentials;
  }

  /** The principal behind a bearer token, compared in constant time. */
  authenticate(token: string): Principal | undefined {
    const offered = Buffer.from(token);
    for (const { token: known, ...principal } of this.credentials) {
      const expected = Buffer.from(known);
      if (expected.length === offered.length && timingSafeEqual(expected, offered)) return principal;
    }
    return undefined;
  }

  /** The first credential with that role (the demo plays the default agent). */
  first(role: Credential['role']): Credential | undefined {
    return this.credentials.find((c) => c.role === role);
  }
}

/** Reads `file` again into `book`; when it is missing or invalid this throws and the book keeps what it had. Returns the new count. */
export function reloadCredentials(book: CredentialBook, file: string): number {
  // A named file: loadCredentials refuses it missing rather than create fresh tokens.
  book.reload(loadCredentials('', file).credentials);
  return book.size;
}
