// effectd's lint: the layers of src/ (docs/architecture.md, "Layers"), no import cycles, no floating
// promises, coded errors only. `npm run lint` runs it; test/unit/lint.unit.spec.ts runs the same
// config through ESLint's Node API, so `npm test` fails (one failed test) on any finding.
//
// The TypeScript-aware plugins come from the private workspace tools/lint, which gives them
// typescript 6: the repository compiles with typescript 7 (the native port), which has no JavaScript
// compiler API for typescript-eslint to use. See tools/lint/package.json.
import { createNodeResolver, importX, tseslint } from '@effectd/lint-tools';

/**
 * The layers: each folder under src/ is one, and may import only itself and what it lists here
 * (a folder, or one file or sub-folder of another layer, as 'transport/wire'). Every layer but core
 * may also import src/shared. The reason is part of each error, so a finding says which way the
 * arrow has to point.
 */
const LAYERS = {
  // The domain: identity, intents, events, fold, decisions, saga rules. No I/O (see CORE_PACKAGES).
  core: { may: [], why: 'the domain core is pure and imports nothing else of src/' },
  // Leaf helpers that know nothing of effectd (packageRoot, the kafkajs idle-loop fix, the coalescing
  // Kafka publisher, the coded error of the code outside the service); the SDK ships them too.
  shared: { may: [], why: 'shared helpers know nothing of effectd' },
  // The configuration schema (tool contracts, providers, sagas), its loading, and the authoring API.
  config: { may: ['core'], why: 'config is the schema of a configuration and its loading, below everything that reads one' },
  // Cross-cutting: every layer may use them, so they use only the core (tracing reads its settings
  // beside the package: packageRoot, in shared; the Kafka lag watcher needs the kafkajs fix, in shared).
  tracing: { may: ['core'], why: 'tracing is cross-cutting: every layer may use it, so it uses only core' },
  logging: { may: ['core'], why: 'logging is cross-cutting: every layer may use it, so it uses only core' },
  metrics: { may: ['core'], why: 'metrics is cross-cutting: every layer may use it, so it uses only core' },
  // Ledger adapters get their settings as arguments (open-ledger parses the URL), so not even config.
  ledger: { may: ['core'], why: 'a ledger adapter depends on the core only' },
  // tracing: every provider call is a client span (http-exchange, mcp-provider).
  providers: { may: ['core', 'config', 'tracing'], why: 'provider adapters depend on the core, the tool contracts and tracing' },
  shell: { may: ['core', 'config', 'ledger', 'providers', 'tracing', 'logging', 'metrics'], why: 'the shell drives the core over the ports; it knows no gateway, runtime or ingress' },
  gateway: { may: ['core', 'config', 'ledger', 'providers', 'tracing', 'logging', 'metrics', 'shell'], why: 'the gateway is the one door into the shell; it knows no runtime or ingress' },
  // The composition root: builds the ledger, registries, shell, workers and gateway the ingresses get.
  runtime: { may: ['core', 'config', 'ledger', 'providers', 'tracing', 'logging', 'metrics', 'shell', 'gateway'], why: 'runtime composes everything below the ingresses' },
  // Ingresses: each takes the runtime (what it composed) and speaks to the gateway; none reaches into
  // the shell, the ledger or the providers, nor into another ingress. One exception: the HTTP server
  // hosts the MCP endpoint (/mcp) beside the REST API, so api may import mcp/mcp-http.ts.
  api: { may: ['core', 'config', 'tracing', 'logging', 'metrics', 'gateway', 'runtime', 'mcp/mcp-http.ts'], why: 'an ingress speaks to the gateway, never to the shell, ledger or providers' },
  transport: { may: ['core', 'config', 'tracing', 'logging', 'metrics', 'gateway', 'runtime'], why: 'an ingress speaks to the gateway, never to the shell, ledger or providers' },
  // The wire schema (protobuf and its codecs) ships in the SDK: core only.
  'transport/wire': { may: ['core'], why: 'the wire schema ships in the SDK, so it imports only the core' },
  mcp: { may: ['core', 'config', 'tracing', 'logging', 'metrics', 'gateway', 'runtime'], why: 'an ingress speaks to the gateway, never to the shell, ledger or providers' },
  // The outermost composition: `effectd start` wires the runtime to every ingress, `effectd config`
  // builds the tool registry to check a configuration (providers), `effectd dev` runs the simulators
  // (the package @effectd/simulators) and `effectd bench` loads the private benchmark workspace when
  // it is there (never a static import: see PACKAGES below). It never reaches into the shell or the ledger.
  cli: { may: ['core', 'config', 'tracing', 'logging', 'metrics', 'providers', 'gateway', 'runtime', 'api', 'transport', 'mcp'], why: 'the CLI composes the ingresses, never the shell or the ledger' },
  // Ships alone (src/sdk/tsconfig.json compiles it with what it imports): the pure core (the agent's
  // answer, the status names), the wire schema, the shared Kafka helpers; nothing of the server.
  sdk: { may: ['core', 'transport/wire'], why: 'the SDK ships alone: only the pure core and the wire schema come with it' },
};

/**
 * The workspaces beside the service (packages/): the simulators (@effectd/simulators, published with
 * the service, which `effectd dev` runs) import nothing of effectd; the benchmark (@effectd/bench,
 * private) may import the service, never the other way round: src/ imports neither by path, and
 * @effectd/bench not at all (src/cli/bench.command.ts loads it by a computed specifier, when present).
 */
const PACKAGE_ZONES = [
  { target: './packages/simulators', from: ['./src', './packages/bench', './sagas', './compensations', './config', './test'], message: 'the simulators (@effectd/simulators) stand in for third parties and import nothing of effectd: copy the few lines you need.' },
  { target: './src', from: ['./packages/bench'], message: 'the service never imports the benchmark (it imports the service): src/cli/bench.command.ts loads it when present.' },
];

/** What src/core may import from packages: the schema library and hashing. Anything else (files, network, drivers, clocks of a framework) is I/O. */
const CORE_PACKAGES = ['zod', 'node:crypto'];

const TOP = Object.keys(LAYERS).filter((layer) => !layer.includes('/'));

/**
 * The no-restricted-paths zones of one layer: every top-level layer it may not import, whole, or but
 * for the sub-paths it may ('mcp/mcp-http.ts'), whose `except` needs a zone of its own.
 */
function zonesOf(layer, { may, why }) {
  const allowed = layer === 'core' || layer === 'shared' ? may : [...may, 'shared'];
  const message = `${layer} may import only ${allowed.join(', ') || 'itself'} (${why}). See the layer table in eslint.config.mjs.`;
  const target = `./src/${layer}`;
  const whole = [];
  const zones = [];
  for (const other of TOP) {
    if (other === layer || layer.startsWith(`${other}/`) || allowed.includes(other)) continue;
    const parts = allowed.filter((a) => a.startsWith(`${other}/`)).map((a) => `./${a.slice(other.length + 1)}`);
    if (parts.length) zones.push({ target, from: `./src/${other}`, except: parts, message });
    else whole.push(`./src/${other}`);
  }
  if (whole.length) zones.push({ target, from: whole, message });
  return zones;
}

const zones = [...Object.entries(LAYERS).flatMap(([layer, rule]) => zonesOf(layer, rule)), ...PACKAGE_ZONES];

/**
 * The files of src/ that may read process.env: the CLI's entry, which hands the environment to the
 * command it runs, and the SDK's documented EFFECTD_TOKEN default (a client library, which imports
 * nothing of the service). The workspaces (packages/: the benchmark, the simulators) are not the
 * service and read their own environment.
 */
const ENVIRONMENT_READERS = ['src/cli/main.ts'];

export default tseslint.config(
  // Only src/ and the workspaces' sources are linted (also by a bare `npx eslint`); the generated protobuf module is not.
  { ignores: ['*', '!src/', '!packages/', '**/node_modules/', '**/dist/', 'src/transport/wire/effectd/'] },
  {
    files: ['src/**/*.ts', 'packages/*/src/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'], extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: {
      // A relative import the resolver cannot follow would slip past the two rules below.
      'import-x/no-unresolved': ['error', { ignore: ['^[^.]'] }],
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': ['error', { zones, basePath: import.meta.dirname }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ThrowStatement > NewExpression[callee.name=/^(Error|TypeError|RangeError)$/]',
          message: 'Throw a coded error: EffectdError (src/core/errors.ts) in the service, CodedError in shared (src/shared/coded-error.ts), the benchmark (the same) and the simulators (their own copy). Only src/cli may throw a plain Error.',
        },
      ],
    },
  },
  {
    // The service never imports the benchmark (it is not installed with the service).
    files: ['src/**/*.ts'],
    ignores: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { regex: '^@effectd/bench(/|$)', message: 'the service never imports the benchmark: src/cli/bench.command.ts loads it when present.' },
        { regex: '^\\.\\.?/(.*/)?packages/', message: 'the service imports a workspace by its package name (@effectd/simulators), never by path.' },
      ] }],
    },
  },
  {
    files: ['packages/simulators/src/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^(effectd|@effectd/)', message: 'the simulators import nothing of effectd.' }] }] },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          regex: `^(?!\\.|${CORE_PACKAGES.map((p) => p.replace(/\./g, '\\.')).join('$|')}$)`,
          message: `src/core does no I/O: it may import only ${CORE_PACKAGES.join(', ')} and its own modules.`,
        }],
      }],
    },
  },
  {
    // The CLI is where errors end: it prints the message and sets the exit code (src/cli/main.ts);
    // so do the benchmark's command (`effectd bench`) and its scripts (npm run bench:*).
    files: ['src/cli/**/*.ts', 'packages/bench/src/command.ts', 'packages/bench/src/*-bench.ts', 'packages/bench/src/no-fault-latency.ts', 'packages/bench/src/throughput/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Below the ingresses and the composition root, logs go to the caller's logger: nothing writes
    // to the console on its own (issue 24, item 4).
    files: ['src/{core,shared,config,ledger,providers,tracing,logging,metrics,shell,gateway}/**/*.ts'],
    rules: { 'no-console': ['error'] },
  },
  {
    // One settings schema (issue 26, item 2): the environment is read once, by the CLI's entry
    // (src/cli/main.ts hands it to the command, which loads Settings with loadSettings from
    // src/config/settings-loader.ts and passes them down). Nothing else reads process.env.
    files: ['src/**/*.ts'],
    ignores: ENVIRONMENT_READERS,
    rules: {
      'no-restricted-properties': ['error', {
        object: 'process',
        property: 'env',
        message: 'Only src/cli/main.ts reads the environment: take Settings (or the slice you need) from the caller; a new variable goes into the table in src/config/settings.ts.',
      }],
    },
  },
);
