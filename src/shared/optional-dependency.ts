/**
 * The packages only some setups use, installed apart from effectd (optional peer dependencies in its
 * package.json): a user on SQLite without trace export installs none of them. Each is loaded only
 * when its setup is asked for; when it is missing, the error says which package, which version, and
 * the command that installs it (test/unit/optional-dependencies.unit.spec.ts checks these against
 * package.json).
 */
export interface OptionalDependency {
  /** The npm package. */
  name: string;
  /** The version effectd is built and tested with (its peerDependencies range pins it). */
  version: string;
  /** What needs it, as the start of a sentence: "the KurrentDB ledger". */
  neededBy: string;
}

export const KURRENTDB_CLIENT: OptionalDependency = { name: '@kurrent/kurrentdb-client', version: '1.3.1', neededBy: 'the KurrentDB ledger (kurrentdb:// or esdb://)' };
export const POSTGRES_DRIVER: OptionalDependency = { name: 'pg', version: '8.23.1', neededBy: 'the PostgreSQL ledger (postgres://)' };
export const OTLP_TRACE_EXPORTER: OptionalDependency = { name: '@opentelemetry/exporter-trace-otlp-http', version: '0.223.1', neededBy: 'trace export over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT)' };

export const OPTIONAL_DEPENDENCIES: readonly OptionalDependency[] = [KURRENTDB_CLIENT, POSTGRES_DRIVER, OTLP_TRACE_EXPORTER];

/** "the KurrentDB ledger (…) needs @kurrent/kurrentdb-client, which is not installed: npm install @kurrent/kurrentdb-client@1.3.1" */
export function missingDependencyMessage(dependency: OptionalDependency): string {
  return `${dependency.neededBy} needs ${dependency.name}, which is not installed (an optional dependency of effectd): npm install ${dependency.name}@${dependency.version}`;
}

/**
 * Whether an error of import() (ERR_MODULE_NOT_FOUND) or require() (MODULE_NOT_FOUND) says that
 * this package is missing, not some other module (a missing file of an installed package is a
 * broken installation, and is reported as it is).
 */
export function isMissingDependency(error: unknown, dependency: OptionalDependency): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && (message.includes(`'${dependency.name}'`) || message.includes(`'${dependency.name}/`));
}

/**
 * Loads what needs an optional dependency (a module of effectd that imports it, or the package
 * itself); when the package is missing, `fail` gets the message that says how to install it (the
 * caller throws its layer's error). Any other failure is rethrown as it is.
 */
export async function loadWithOptional<T>(dependency: OptionalDependency, load: () => Promise<T>, fail: (message: string) => never): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissingDependency(error, dependency)) fail(missingDependencyMessage(dependency));
    throw error;
  }
}

/** The same for a synchronous require (a CommonJS package loaded through createRequire). */
export function requireWithOptional<T>(dependency: OptionalDependency, load: () => T, fail: (message: string) => never): T {
  try {
    return load();
  } catch (error) {
    if (isMissingDependency(error, dependency)) fail(missingDependencyMessage(dependency));
    throw error;
  }
}
