import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Dispatcher } from 'undici';

export interface ReadResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, else the text; undefined when empty. */
  body: unknown;
}

/** Reads a whole node:http response; `broken` is called instead of `done` when the stream breaks or is aborted. */
export function readResponse(res: IncomingMessage, done: (response: ReadResponse) => void, broken: (error: string) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('error', (error: NodeJS.ErrnoException) => broken(`response broken: ${error.code ?? error.message}`));
  res.on('aborted', () => broken('response aborted'));
  res.on('end', () => done(answer(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))));
}

/** Reads a whole undici response; rejects when its body breaks off. */
export async function responseOf(res: Dispatcher.ResponseData): Promise<ReadResponse> {
  return answer(res.statusCode, res.headers, await res.body.text());
}

function answer(status: number, raw: IncomingHttpHeaders, text: string): ReadResponse {
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return { status, headers, body };
}
