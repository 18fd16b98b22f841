import type { IncomingMessage } from 'node:http';
import { parseFormBody } from './form-body.js';
import { CodedError } from './coded-error.js';

const MAX_BODY_BYTES = 1024 * 1024;

export async function readRawBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new CodedError('invalid_command', 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** JSON or Stripe-style urlencoded; an empty body is `{}`. Throws SyntaxError when malformed. */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  const text = raw.toString('utf8');
  if (text.trim() === '') return {};
  if (contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) return parseFormBody(text);
  return JSON.parse(text) as unknown;
}
