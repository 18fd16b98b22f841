export interface EmailMessage {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  text: string | null;
  html: string | null;
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
}

const TAG_PART = /^[A-Za-z0-9_-]{1,256}$/;
const MAX_RECIPIENTS = 50;

/** Resend's send payload; returns a validation message on failure. */
export function parseEmail(body: unknown): EmailMessage | string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'The request body must be a JSON object.';
  const b = body as Record<string, unknown>;
  if (!isAddress(b.from)) return 'The `from` field is required and must be an email address.';
  const to = addressList(b.to, 'to', true);
  if (typeof to === 'string') return to;
  const cc = addressList(b.cc, 'cc', false);
  if (typeof cc === 'string') return cc;
  const bcc = addressList(b.bcc, 'bcc', false);
  if (typeof bcc === 'string') return bcc;
  const replyTo = addressList(b.reply_to, 'reply_to', false);
  if (typeof replyTo === 'string') return replyTo;
  if (typeof b.subject !== 'string' || b.subject === '') return 'The `subject` field is required.';
  if (b.text !== undefined && typeof b.text !== 'string') return 'The `text` field must be a string.';
  if (b.html !== undefined && typeof b.html !== 'string') return 'The `html` field must be a string.';
  if (b.text === undefined && b.html === undefined) return 'Either `text` or `html` is required.';
  const headers = parseHeaders(b.headers);
  if (typeof headers === 'string') return headers;
  const tags = parseTags(b.tags);
  if (typeof tags === 'string') return tags;
  return {
    from: b.from,
    to,
    cc,
    bcc,
    reply_to: replyTo,
    subject: b.subject,
    text: (b.text as string | undefined) ?? null,
    html: (b.html as string | undefined) ?? null,
    headers,
    tags,
  };
}

function isAddress(value: unknown): value is string {
  return typeof value === 'string' && /\S+@\S+/.test(value);
}

function addressList(value: unknown, field: string, required: boolean): string[] | string {
  if (value === undefined && !required) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every(isAddress)) {
    return `The \`${field}\` field must be an email address or a non-empty list of them.`;
  }
  if (list.length > MAX_RECIPIENTS) return `The \`${field}\` field accepts at most ${MAX_RECIPIENTS} addresses.`;
  return list;
}

function parseHeaders(value: unknown): Record<string, string> | string {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'The `headers` field must be an object.';
  const entries = Object.entries(value as Record<string, unknown>);
  if (!entries.every(([k, v]) => /^[!-9;-~]+$/.test(k) && typeof v === 'string')) {
    return 'The `headers` field must map header names to string values.';
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function parseTags(value: unknown): { name: string; value: string }[] | string {
  if (value === undefined) return [];
  const message = 'Tags must be a list of at most 75 {name, value} pairs of ASCII letters, digits, underscores or dashes.';
  if (!Array.isArray(value) || value.length > 75) return message;
  const valid = value.every(
    (t: unknown) =>
      t !== null &&
      typeof t === 'object' &&
      TAG_PART.test(String((t as { name?: unknown }).name)) &&
      TAG_PART.test(String((t as { value?: unknown }).value)),
  );
  return valid ? value.map((t: { name: string; value: string }) => ({ name: t.name, value: t.value })) : message;
}
