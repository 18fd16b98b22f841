import { fingerprint } from './canonical.js';
import { parseEmail, type EmailMessage } from './email-params.js';
import { IdempotencyStore } from './idempotency-store.js';
import type { IdSource } from './ids.js';
import { headerValue, json, type Call, type Execution, type Reply, type Route, type SimProvider } from './sim-http.js';
import type { SimClock } from './sim-clock.js';

export interface EmailOptions {
  /** Idempotency-key retention on the SimClock (Resend: 24 h). */
  retentionMs?: number;
  /** How long (SimClock) before a sent email shows up in `GET /emails` (Resend: undocumented). */
  listLagMs?: number;
}

interface SentEmail extends EmailMessage {
  id: string;
  object: 'email';
  created_at: string;
  last_event: 'delivered';
}

interface Provenance {
  idempotencyKey: string | null;
  createdAtMs: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const resendError = (status: number, name: string, message: string): Reply => json(status, { statusCode: status, name, message });

/** Resend-style transactional email: `Idempotency-Key`, custom headers as the lookup reference. */
export class EmailSimulator implements SimProvider {
  readonly routes: readonly Route[];
  private emails = new Map<string, { email: SentEmail } & Provenance>();
  private readonly keys: IdempotencyStore<string>;
  private readonly listLagMs: number;

  constructor(
    private readonly clock: SimClock,
    private readonly ids: IdSource,
    options: EmailOptions = {},
  ) {
    this.keys = new IdempotencyStore<string>(clock, options.retentionMs ?? DAY_MS);
    this.listLagMs = options.listLagMs ?? 0;
    this.routes = [
      { method: 'POST', pattern: '/emails', write: (call) => this.send(call) },
      { method: 'GET', pattern: '/emails', read: (call) => this.list(call) },
      { method: 'GET', pattern: '/emails/:id', read: (call) => this.retrieve(call.params.id) },
    ];
  }

  oracle(): { emails: (SentEmail & Provenance)[] } {
    return { emails: [...this.emails.values()].map(({ email, ...provenance }) => ({ ...structuredClone(email), ...provenance })) };
  }

  reset(): void {
    this.emails = new Map();
    this.keys.clear();
  }

  faultReply(status: number, body?: unknown): Reply {
    if (body !== undefined) return json(status, body);
    if (status === 429) return resendError(429, 'rate_limit_exceeded', 'Too many requests. Please limit the number of requests per second.');
    return resendError(status, 'application_error', 'An unexpected error occurred.');
  }

  malformedBody(message: string): Reply {
    return resendError(422, 'validation_error', `Invalid request body: ${message}`);
  }

  notFound(method: string, path: string): Reply {
    return resendError(404, 'not_found', `No route for ${method} ${path}.`);
  }

  private send(call: Call): Reply | Execution {
    const key = headerValue(call.headers, 'idempotency-key');
    if (key !== undefined && (key.length < 1 || key.length > 256)) {
      return resendError(400, 'invalid_idempotency_key', 'The key must be between 1-256 chars.');
    }
    const digest = fingerprint(call.body);
    if (key !== undefined) {
      const earlier = this.keys.get(key);
      if (earlier?.state === 'in-flight') {
        return resendError(409, 'concurrent_idempotent_requests', 'Same idempotency key used while original request is still in progress.');
      }
      if (earlier?.state === 'done') {
        if (earlier.fingerprint !== digest) {
          return resendError(409, 'invalid_idempotent_request', 'Same idempotency key used with a different request payload. Change your idempotency key or payload.');
        }
        return { ...json(200, { id: earlier.result }), replayed: true };
      }
    }
    const message = parseEmail(call.body);
    if (typeof message === 'string') return resendError(422, 'validation_error', message);
    if (key !== undefined) this.keys.claim(key, digest, call.path);
    return {
      commit: () => {
        const createdAtMs = this.clock.now();
        const email: SentEmail = {
          id: this.ids.next('em'),
          object: 'email',
          ...message,
          created_at: new Date(createdAtMs).toISOString(),
          last_event: 'delivered',
        };
        this.emails.set(email.id, { email, idempotencyKey: key ?? null, createdAtMs });
        if (key !== undefined) this.keys.complete(key, email.id);
        return json(200, { id: email.id });
      },
      // Resend documents replay of the same response, but not whether failures are cached: they are not here.
      fail: (reply) => {
        if (key !== undefined) this.keys.release(key);
        return reply;
      },
    };
  }

  private retrieve(id: string): Reply {
    const stored = this.emails.get(id);
    if (stored === undefined) return resendError(404, 'not_found', 'Email not found');
    return json(200, structuredClone(stored.email));
  }

  /** `?header=Name:value` filters by a custom header (name case-insensitive, value exact). */
  private list(call: Call): Reply {
    const filter = call.query.get('header');
    let matches: (email: SentEmail) => boolean = () => true;
    if (filter !== null) {
      const colon = filter.indexOf(':');
      if (colon <= 0) return resendError(422, 'validation_error', 'The `header` filter must look like Name:value.');
      const name = filter.slice(0, colon).trim().toLowerCase();
      const value = filter.slice(colon + 1).trim();
      matches = (email) => Object.entries(email.headers).some(([k, v]) => k.toLowerCase() === name && v === value);
    }
    const visibleBefore = this.clock.now() - this.listLagMs;
    const data = [...this.emails.values()]
      .filter((s) => s.createdAtMs <= visibleBefore && matches(s.email))
      .reverse()
      .map((s) => structuredClone(s.email));
    return json(200, { object: 'list', has_more: false, data });
  }
}
