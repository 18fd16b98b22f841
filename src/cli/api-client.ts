import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSettings, type Environment } from '../config/settings-loader.js';
import { defaultTokenDataDir } from './token.command.js';

export interface ApiTarget {
  url: string;
  token: string;
}

/** Where the operator CLI talks to: --url/--token, else EFFECTD_URL/EFFECTD_TOKEN, else the local data dir's credentials (found as `effectd token` finds them). */
export function apiTarget(values: Record<string, string | boolean | undefined>, role: 'agent' | 'operator', env: Environment): ApiTarget {
  const settings = loadSettings(env, { url: values.url, token: values.token, dataDir: values['data-dir'] });
  const { url } = settings;
  if (settings.token) return { url, token: settings.token };
  const file = join(settings.dataDir !== undefined ? resolve(settings.dataDir) : defaultTokenDataDir(), 'credentials.json');
  if (!existsSync(file)) throw new Error(`no token: pass --token (or EFFECTD_TOKEN), or --data-dir of an effectd whose ${file} holds an ${role} credential`);
  const { credentials } = JSON.parse(readFileSync(file, 'utf8')) as { credentials: { token: string; role: string }[] };
  const found = credentials.find((c) => c.role === role);
  if (!found) throw new Error(`${file} holds no ${role} credential`);
  return { url, token: found.token };
}

export async function callApi<T>(target: ApiTarget, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${target.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new Error(`cannot reach effectd at ${target.url} (${(error as Error).message}); is \`effectd start\` running? (--url to point elsewhere)`);
  }
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${(parsed as { message?: string })?.message ?? text}`);
  return parsed as T;
}

export const targetOptions = {
  url: { type: 'string' as const },
  token: { type: 'string' as const },
  'data-dir': { type: 'string' as const },
};

export const targetHelp: [string, string][] = [
  ['--url URL', 'effectd to talk to (default http://127.0.0.1:8080, or EFFECTD_URL)'],
  ['--token T', 'bearer token (or EFFECTD_TOKEN; default: from <data-dir>/credentials.json)'],
  ['--data-dir D', 'data dir whose credentials.json to use (default: EFFECTD_DATA_DIR, else ./.effectd-dev if it exists, else ./.effectd)'],
];
