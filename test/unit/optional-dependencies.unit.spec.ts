// A user on SQLite without trace export installs none of the drivers only other setups use: they are
// optional peer dependencies, loaded when a URL or a setting asks for them. When one is missing, the
// start fails with the package, its version and the command that installs it (played here by a
// loader that throws what Node throws for a package that is not installed).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isEffectdError } from '../../src/core/errors.js';
import { openLedger } from '../../src/ledger/open-ledger.js';
import { KURRENTDB_CLIENT, OPTIONAL_DEPENDENCIES, OTLP_TRACE_EXPORTER, POSTGRES_DRIVER } from '../../src/shared/optional-dependency.js';
import { otlpTraceExporter } from '../../src/tracing/start-tracing.js';

/** What import() throws when a package is not installed. */
const notInstalled = (name: string) => Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/effectd/dist/src/ledger/kurrentdb-ledger.js`), { code: 'ERR_MODULE_NOT_FOUND' });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => undefined, (error: unknown) => error);
}

describe('optional dependencies', () => {
  it('the KurrentDB ledger without @kurrent/kurrentdb-client: says how to install it', async () => {
    const error = await failure(openLedger('kurrentdb://127.0.0.1:2113?tls=false', '/nowhere', {}, {
      postgres: () => Promise.reject(new Error('not asked for')),
      kurrentdb: () => Promise.reject(notInstalled('@kurrent/kurrentdb-client')),
    }));
    expect(isEffectdError(error) && error.code).toBe('invalid_config');
    expect((error as Error).message).toBe('the KurrentDB ledger (kurrentdb:// or esdb://) needs @kurrent/kurrentdb-client, which is not installed (an optional dependency of effectd): npm install @kurrent/kurrentdb-client@1.3.1');
  });

  it('the PostgreSQL ledger without pg: says how to install it', async () => {
    const error = await failure(openLedger('postgres://u:p@127.0.0.1:5432/db', '/nowhere', {}, {
      postgres: () => Promise.reject(notInstalled('pg')),
      kurrentdb: () => Promise.reject(new Error('not asked for')),
    }));
    expect(isEffectdError(error) && error.code).toBe('invalid_config');
    expect((error as Error).message).toMatch(/^the PostgreSQL ledger \(postgres:\/\/\) needs pg, which is not installed .*: npm install pg@8\.23\.1$/);
  });

  it('trace export without the OTLP exporter: says how to install it; another missing module is not mistaken for it', () => {
    const requireMissing = () => {
      throw Object.assign(new Error(`Cannot find module '${OTLP_TRACE_EXPORTER.name}'\nRequire stack:\n- /app/x.js`), { code: 'MODULE_NOT_FOUND' });
    };
    expect(() => otlpTraceExporter(requireMissing)).toThrow(`npm install @opentelemetry/exporter-trace-otlp-http@${OTLP_TRACE_EXPORTER.version}`);
    const broken = Object.assign(new Error("Cannot find module '/app/node_modules/@opentelemetry/otlp-exporter-base/build/x.js'"), { code: 'MODULE_NOT_FOUND' });
    expect(() => otlpTraceExporter(() => {
      throw broken;
    })).toThrow(broken);
    // Installed (as in this repository): the real exporter class.
    expect(typeof otlpTraceExporter()).toBe('function');
  });

  it('package.json lists each as an optional peer at the version the message names (and the repository installs it for its tests)', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string>; peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }> };
    for (const dependency of [KURRENTDB_CLIENT, POSTGRES_DRIVER, OTLP_TRACE_EXPORTER]) {
      expect(OPTIONAL_DEPENDENCIES).toContain(dependency);
      expect(manifest.dependencies[dependency.name], dependency.name).toBeUndefined();
      expect(manifest.peerDependencies[dependency.name], dependency.name).toMatch(new RegExp(`^\\^?${dependency.version.replaceAll('.', '\\.')}$`));
      expect(manifest.peerDependenciesMeta[dependency.name]?.optional, dependency.name).toBe(true);
      expect(manifest.devDependencies[dependency.name], dependency.name).toBeDefined();
    }
  });
});
