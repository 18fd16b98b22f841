import type { IncomingMessage } from 'node:http';

export interface ReadResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, else the text; undefined when empty. */
  body: unknown;
}

/** Reads a whole response; `broken` is called instead of `done` when the stream breaks or is aborted. */
export function readResponse(res: IncomingMessage, done: (response: ReadResponse) => void, broken: (error: string) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('error', (error: NodeJS.ErrnoException) => broken(`response broken: ${error.code ?? error.message}`));
  res.on('aborted', () => broken('response aborted'));
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    done({ status: res.statusCode ?? 0, headers, body });
  });
}
