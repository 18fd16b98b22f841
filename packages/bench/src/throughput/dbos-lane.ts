import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The DBOS Transact app (dbos-app.ts) in its own process, on the same PostgreSQL server, with a
 * system database of its own for this run (DBOS creates it at launch; `drop()` removes it).
 */
export interface DbosApp {
  label: string;
  url: string;
  pids(): number[];
  /** Its PostgreSQL connections carry it (application_name), so its lane charges only its own backends. */
  applicationName: string;
  /** The system database DBOS created for this run. */
  database: string;
  stop(): Promise<void>;
}

export const DBOS_VERSION = '5.3.0';

/** `serverUrl`: a database URL on the server (any database); DBOS gets `<that database>_dbos_<run>` beside it. */
export async function startDbosApp(serverUrl: string, paymentsUrl: string, run: string): Promise<DbosApp> {
  const url = new URL(serverUrl);
  const database = `${url.pathname.slice(1)}_dbos_${run}`;
  const applicationName = `dbos-bench-${run}`;
  url.pathname = `/${database}`;
  url.searchParams.set('application_name', applicationName);
  const script = fileURLToPath(new URL('./dbos-app.js', import.meta.url));
  const child = spawn(process.execPath, [script], { env: { ...process.env, PAYMENTS_URL: paymentsUrl, DBOS_SYSTEM_DATABASE_URL: url.toString() }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const served = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the DBOS app did not serve within 60 s:\n${output}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      const found = /listening (\S+)/.exec(chunk.toString());
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      const missing = /Cannot find (package|module) '@dbos-inc\/dbos-sdk'/.test(output);
      reject(new Error(missing ? `the dbos lane needs @dbos-inc/dbos-sdk ${DBOS_VERSION} (a devDependency: npm ci), or leave dbos out of --ingress` : `the DBOS app exited (${code}) before it served:\n${output}`));
    });
  });
  const stop = () => new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
  return { label: 'dbos', url: served, pids: () => (child.pid ? [child.pid] : []), applicationName, database, stop };
}
