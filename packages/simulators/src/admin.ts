import { z } from 'zod';
import { faultRulesSchema, type FaultBook } from './faults.js';
import type { RequestLog } from './request-log.js';
import { json, type Reply, type SimProvider } from './sim-http.js';
import type { SimClock } from './sim-clock.js';

/** What the admin and oracle endpoints reach into. Only benchmarks and tests call them. */
export interface AdminTarget {
  readonly kind: string;
  readonly clock: SimClock;
  readonly faults: FaultBook;
  readonly log: RequestLog;
  readonly provider: SimProvider;
  reset(): void;
}

const clockSchema = z.strictObject({ advanceMs: z.number().nonnegative() });

export function isAdminPath(path: string): boolean {
  return path.startsWith('/_admin/') || path.startsWith('/_oracle/');
}

export function handleAdmin(target: AdminTarget, method: string, path: string, raw: Buffer): Reply {
  const route = `${method} ${path}`;
  switch (route) {
    case 'GET /_oracle/state':
      return json(200, target.provider.oracle());
    case 'GET /_admin/health':
      return json(200, { ok: true, kind: target.kind, now: target.clock.now() });
    case 'GET /_admin/requests':
      return json(200, { requests: target.log.all() });
    case 'POST /_admin/reset':
      target.reset();
      return json(200, { ok: true });
    case 'GET /_admin/clock':
      return json(200, { now: target.clock.now() });
    case 'POST /_admin/clock':
      return withBody(raw, clockSchema, ({ advanceMs }) => json(200, { now: target.clock.advance(advanceMs) }));
    case 'GET /_admin/faults':
      return json(200, target.faults.describe());
    case 'POST /_admin/faults':
      return withBody(raw, faultRulesSchema, ({ rules }) => {
        target.faults.replace(rules);
        return json(200, target.faults.describe());
      });
    default:
      return json(404, { error: `No admin endpoint ${route}.` });
  }
}

function withBody<T>(raw: Buffer, schema: z.ZodType<T>, use: (body: T) => Reply): Reply {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8') || '{}');
  } catch (error) {
    return json(400, { error: `Invalid JSON: ${(error as Error).message}` });
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) return json(400, { error: z.prettifyError(parsed.error) });
  return use(parsed.data);
}
