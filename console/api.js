// The console talks to effectd's own /v1 API with the bearer token the person entered.

const KEY = 'effectd.console.token';

export const session = {
  get token() {
    return sessionStorage.getItem(KEY);
  },
  set token(value) {
    if (value) sessionStorage.setItem(KEY, value);
    else sessionStorage.removeItem(KEY);
  },
};

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error;
  }
}

export async function api(path, { method = 'GET', body } = {}) {
  const headers = { authorization: `Bearer ${session.token ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = { message: text };
  }
  if (!res.ok) throw new ApiError(res.status, parsed);
  return parsed;
}

export const enc = encodeURIComponent;
