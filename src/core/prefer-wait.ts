/**
 * The `wait` preference of an HTTP `Prefer` header (RFC 7240 §4.3: delta-seconds), in ms, or
 * undefined when there is none or it is not understood (the RFC says to ignore such a preference,
 * not to refuse the request). The first `wait` wins.
 */
export function preferredWaitMs(header: string | readonly string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = typeof header === 'string' ? header : header.join(',');
  for (const preference of text.split(',')) {
    const [token, ...value] = preference.split(';')[0]!.split('=');
    if (token!.trim().toLowerCase() !== 'wait') continue;
    const seconds = value.join('=').trim().replace(/^"(.*)"$/, '$1');
    return /^\d{1,9}$/.test(seconds) ? Number(seconds) * 1000 : undefined;
  }
  return undefined;
}

/** The `Preference-Applied` value for a budget that was applied: whole seconds, as the request's `wait` was given. */
export function appliedWait(ms: number): string {
  return `wait=${Math.ceil(ms / 1000)}`;
}
