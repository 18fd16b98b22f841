import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseCommand } from '../../src/cli/cli-kit.js';
import { startCommand } from '../../src/cli/start.command.js';

/**
 * docker-compose.yml is checked without a Docker engine: Compose itself validates it
 * (scripts/compose-check.sh), and each service is held to what the project's own scripts start
 * on machines without Docker (scripts/services-up.sh, scripts/kafka/*) and to effectd's CLI.
 */
interface Service { image?: string; command?: string; environment?: Record<string, string | number>; ports?: string[]; volumes?: string[]; depends_on?: unknown; profiles?: string[] }
const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as { services: Record<string, Service> };
const services = compose.services;

const check = (file?: string) => spawnSync('bash', ['scripts/compose-check.sh', ...(file ? [file] : [])], { encoding: 'utf8', timeout: 240_000 });

/** The shell steps of a service's `sh -c "a && b && c"` command, each as words. */
function steps(service: Service): string[][] {
  const inner = /^sh -c "(.*)"$/s.exec(service.command ?? '')?.[1] ?? service.command ?? '';
  return inner.split('&&').map((step) => step.trim().split(/\s+/));
}

/** The words after `node bin/effectd.js start`, parsed by effectd's own CLI parser (an unknown flag throws). */
function effectdStart(service: Service) {
  const step = steps(service).find((words) => words[0] === 'node' && words[1] === 'bin/effectd.js' && words[2] === 'start');
  expect(step, 'the service runs `node bin/effectd.js start …`').toBeDefined();
  const parsed = parseCommand(startCommand, step!.slice(3));
  if (parsed === 'help') throw new Error('the compose command asks for --help');
  return parsed.values;
}

function containerPort(mapping: string): number {
  return Number(mapping.split(':').at(-1));
}

/** `key=value` lines of the server.properties scripts/kafka/broker.sh writes, with its shell variables as written. */
function brokerProperties(): Map<string, string> {
  const script = readFileSync('scripts/kafka/broker.sh', 'utf8');
  const heredoc = /cat >"\$tmp" <<EOF\n([\s\S]*?)\nEOF/.exec(script)?.[1];
  expect(heredoc, 'broker.sh writes server.properties from a heredoc').toBeDefined();
  return new Map(heredoc!.split('\n').filter((l) => /^[a-z][a-z0-9.]*=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

/** The apache/kafka image's convention: KAFKA_FOO_BAR is the broker property foo.bar. */
function kafkaImageProperties(service: Service): Map<string, string> {
  return new Map(Object.entries(service.environment ?? {}).filter(([k]) => k.startsWith('KAFKA_')).map(([k, v]) => [k.slice('KAFKA_'.length).toLowerCase().replaceAll('_', '.'), String(v)]));
}

/** A `NAME=value` line of a script. */
function scriptValue(file: string, name: string): string {
  const value = new RegExp(`^${name}=(.*)$`, 'm').exec(readFileSync(file, 'utf8'))?.[1];
  expect(value, `${file} sets ${name}`).toBeDefined();
  return value!;
}

describe('docker-compose.yml', () => {
  it('is a valid Compose file, as docker-compose itself says (scripts/compose-check.sh), and a broken one is red', (context) => {
    const ok = check();
    if (ok.status === 3) context.skip(`the validator could not be installed: ${ok.stderr.trim().split('\n').at(-1)}`);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/is a valid Compose file \(docker-compose 1\.29\.2: postgres kafka effectd prometheus grafana kurrentdb effectd-kurrentdb\)/);

    // The same file with one reference broken: the check must fail, naming what is wrong.
    const dir = mkdtempSync(join(tmpdir(), 'effectd-compose-'));
    cpSync('deploy', join(dir, 'deploy'), { recursive: true });
    writeFileSync(join(dir, 'docker-compose.yml'), readFileSync('docker-compose.yml', 'utf8').replace('depends_on: [effectd]', 'depends_on: [effectd-typo]'));
    const broken = check(join(dir, 'docker-compose.yml'));
    expect(broken.status).toBe(1);
    expect(broken.stderr).toMatch(/depends on service 'effectd-typo' which is undefined/);
  });

  it('kafka: the image is the Kafka version scripts/kafka/pom.xml pins, and every broker setting of scripts/kafka/broker.sh is set alike', () => {
    const kafka = services.kafka!;
    const pinned = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(readFileSync('scripts/kafka/pom.xml', 'utf8'))?.[1];
    expect(kafka.image).toBe(`apache/kafka:${pinned}`);

    const script = brokerProperties();
    const image = kafkaImageProperties(kafka);
    // Addresses and paths are the machine's (loopback there, the compose network here: compared
    // structurally below); thread counts, retention and segment size are tuning of the 2-core host.
    const local = new Set(['listeners', 'advertised.listeners', 'controller.quorum.voters', 'listener.security.protocol.map', 'inter.broker.listener.name', 'log.dirs',
      'num.network.threads', 'num.io.threads', 'num.recovery.threads.per.data.dir', 'log.retention.hours', 'log.segment.bytes']);
    const differ = [...script].filter(([key]) => !local.has(key)).filter(([key, value]) => image.get(key) !== value).map(([key, value]) => `${key}: broker.sh ${value}, compose ${image.get(key) ?? '(unset)'}`);
    expect(differ).toEqual([]);
    expect(script.size - local.size).toBeGreaterThanOrEqual(15);

    // One combined broker+controller: the controller listener exists, the voter is this node, every listener has a protocol.
    const listeners = image.get('listeners')!.split(',').map((l) => l.split('://')[0]);
    expect(listeners).toContain(image.get('controller.listener.names'));
    expect(listeners).toContain(image.get('inter.broker.listener.name'));
    expect(image.get('controller.quorum.voters')).toMatch(new RegExp(`^${image.get('node.id')}@kafka:\\d+$`));
    const protocols = new Map(image.get('listener.security.protocol.map')!.split(',').map((p) => p.split(':') as [string, string]));
    for (const l of listeners) expect(protocols.get(l!), l).toBe('PLAINTEXT');
  });

  it('postgres: the role, password and database are the ones scripts/services-up.sh creates, and effectd connects with them', () => {
    const env = services.postgres!.environment!;
    const role = scriptValue('scripts/services-up.sh', 'PG_ROLE');
    const password = scriptValue('scripts/services-up.sh', 'PG_PASSWORD');
    const database = /^\(([^ )]+)/.exec(scriptValue('scripts/services-up.sh', 'PG_DATABASES'))![1];
    expect(env).toMatchObject({ POSTGRES_USER: role, POSTGRES_PASSWORD: password, POSTGRES_DB: database });
    const port = containerPort(services.postgres!.ports![0]!);
    expect(services.effectd!.environment!.EFFECTD_LEDGER).toBe(`postgres://${role}:${password}@postgres:${port}/${database}`);
  });

  it('effectd: its start flags are options of `effectd start`, it listens where its port is published and Prometheus scrapes, and it consumes from the broker inside compose', () => {
    const effectd = services.effectd!;
    const flags = effectdStart(effectd);
    expect(flags.host).toBe('0.0.0.0'); // inside a container: a published port reaches only a non-loopback listener
    const port = Number(flags.port);
    expect(effectd.ports!.map(containerPort)).toEqual([port]);
    const prometheus = parse(readFileSync('deploy/prometheus/prometheus.yml', 'utf8')) as { scrape_configs: { static_configs: { targets: string[] }[] }[] };
    expect(prometheus.scrape_configs[0]!.static_configs[0]!.targets).toContain(`effectd:${port}`);

    const advertised = kafkaImageProperties(services.kafka!).get('advertised.listeners')!.split(',');
    const internal = kafkaImageProperties(services.kafka!).get('inter.broker.listener.name')!;
    expect(advertised).toContain(`${internal}://${flags.kafka}`);
    // The topics are made as services-up.sh makes them, against the same broker, before effectd starts.
    const all = steps(effectd);
    const topics = all.findIndex((words) => words.includes('scripts/kafka/ensure-topics.mjs'));
    expect(topics).toBeGreaterThanOrEqual(0);
    expect(all[topics]).toContain(`EFFECTD_KAFKA_BROKERS=${flags.kafka}`);
    expect(topics).toBeLessThan(all.findIndex((words) => words[1] === 'bin/effectd.js'));
    expect(readFileSync('scripts/services-up.sh', 'utf8')).toMatch(/node "\$SCRIPT_DIR\/kafka\/ensure-topics\.mjs"/);
  });

  it('effectd-kurrentdb: its start flags are options of `effectd start` and its ledger is the kurrentdb service', () => {
    const service = services['effectd-kurrentdb']!;
    const flags = effectdStart(service);
    expect(flags.host).toBe('0.0.0.0');
    expect(service.ports!.map(containerPort)).toEqual([Number(flags.port)]);
    const kurrentPort = containerPort(services.kurrentdb!.ports![0]!);
    expect(service.environment!.EFFECTD_LEDGER).toBe(`kurrentdb://kurrentdb:${kurrentPort}?tls=false`);
    expect(service.profiles).toEqual(services.kurrentdb!.profiles);
  });

  it('every service that builds effectd runs scripts of package.json, and keeps its node_modules off the host checkout', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const [name, service] of Object.entries(services).filter(([, s]) => s.command?.includes('npm '))) {
      for (const words of steps(service).filter((w) => w[0] === 'npm' && w[1] === 'run')) expect(Object.keys(scripts), `${name}: npm run ${words[2]}`).toContain(words[2]);
      // `npm ci` in a container would otherwise replace the host's node_modules (native modules built for the container).
      expect(service.volumes, name).toEqual(expect.arrayContaining(['.:/app', '/app/node_modules', '/app/dist']));
    }
    for (const s of Object.values(services)) for (const v of s.volumes ?? []) {
      const source = v.split(':')[0]!;
      if (source.startsWith('./')) expect(existsSync(source), v).toBe(true);
    }
  });
});
