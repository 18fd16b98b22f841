import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sagas } from '../../sagas/index.js';
import type { LedgerEvent } from '../../src/core/events.js';
import { emptyWorkflow, foldWorkflow, type WorkflowState } from '../../src/core/fold.js';
import type { CompensationRetryPolicy } from '../../src/core/saga/saga-decision.js';
import type { RecordedEvent } from '../../src/ledger/ledger.port.js';
import { rowEvents, type StoredRow } from '../../src/ledger/postgres-rows.js';
import { toRecorded, type Row as SqliteRow } from '../../src/ledger/sqlite-ledger.js';
import { decisionsAt, type EffectDecisions, type SagaContext, type ToolPolicies } from '../support/replay-decisions.js';

/**
 * Replay of recorded histories (test/replay/README.md): ledgers written by an earlier effectd, one
 * fixture per stored format and event version, are decoded from their RAW rows with today's
 * readers, folded event by event, and after every event every decision (test/support/
 * replay-decisions.ts) is taken at the event's own time and later; they must be the decisions
 * recorded next to the fixture. A change that alters a decision on an old history fails here.
 *
 * REPLAY_UPDATE=1 writes the expected decisions of a fixture that has none yet (a new fixture);
 * REPLAY_UPDATE=overwrite rewrites them all: a deliberate change of behaviour, reviewed in its diff.
 */
const DIR = 'test/replay/fixtures';
const UPDATE = process.env.REPLAY_UPDATE;
const DAY_MS = 86_400_000;
const MODES: (keyof EffectDecisions)[] = ['status', 'submit', 'reconcile', 'inline', 'settleOwn', 'settleOther'];

interface Fixture {
  header: { format: string; eventVersion: number; effectdCommit: string; recordedAt: string; command: string; cells: string[] };
  ledgers: {
    kind: 'postgres' | 'sqlite';
    name: string;
    configuration: { keyRetentionMs: number; sagaCompensationRetry: CompensationRetryPolicy; tools: Record<string, ToolPolicies> };
    cells: { stream: string; workload: string; fault: string; policy: string; failAt?: string }[];
    rows: unknown[];
  }[];
}

interface FinalEffect { status: string; receipt?: string; attempts: number; checks: number }

/** What the decisions file holds per stream: per offset, the lines that changed since the previous event (`#<event> <effect>: <decisions>`). */
interface ExpectedStream {
  cell: string;
  final: { effects: Record<string, FinalEffect>; saga?: string };
  decisions: Record<string, string[]>;
}
interface ExpectedFile {
  fixture: string;
  generatedBy: string;
  line: string;
  offsets: Record<string, string>;
  coverage: Record<string, string[]>;
  streams: Record<string, ExpectedStream>;
}

/** One recorded stream, decoded, with what it needs to be replayed. */
interface Stream {
  name: string;
  cell: string;
  events: LedgerEvent[];
  policyOf(tool: string): ToolPolicies;
  saga: SagaContext;
  settleWindowMs: number;
}

const fixtureFiles = readdirSync(DIR).filter((f) => /^[a-z0-9-]+-v\d+\.json$/.test(f)).sort();

/**
 * Every recorded ledger must hold these (`type` or `type:detail`), so a re-recording cannot
 * silently lose coverage. SQLite's fixture is a cheaper extra: it must hold the same.
 */
const REQUIRED_EVENTS = [
  'EffectDeclared', 'AttemptStarted',
  'AttemptFinished:committed', 'AttemptFinished:unknown', 'AttemptFinished:failed_before_effect', 'AttemptFinished:terminal_failure',
  'ReconciliationChecked:committed', 'ReconciliationChecked:pending', 'ReconciliationChecked:not_committed',
  'EffectEscalated', 'EffectResolved', 'EffectHeld:content', 'EffectHeld:target', 'EffectReleased:effectd', 'EffectReleased:operator',
  'ResendAudited', 'DuplicateDetected', 'DuplicateHandled', 'DecisionRecorded',
  'SagaStarted', 'SagaCompensating', 'SagaFinished:completed', 'SagaFinished:compensated',
];
/** Decision kinds the replay must meet at least once per fixture (the first word of each decision string). */
const REQUIRED_DECISIONS: Record<string, string[]> = {
  status: ['declared', 'held', 'dispatching', 'unknown', 'committed', 'failed_before_effect', 'terminal_failure', 'escalated'],
  submit: ['claim', 'held', 'in-flight', 'reconcile-first', 'replay'],
  reconcile: ['none', 'wait', 'lookup', 'retry-same-key', 'not-committed:', 'escalate:', 'audit'],
  // (A resend comes first only for a keyed tool without a lookup; the benchmark has none.)
  inline: ['none', 'wait', 'lookup'],
  settleOwn: ['none', 'wait', 'lookup'],
  settleOther: ['none', 'wait', 'lookup', 'retry-same-key', 'not-committed:'],
  saga: ['run-step', 'compensate', 'wait', 'begin-compensation', 'finish', 'finished'],
};
const MIN_EFFECTS = 40;
const MIN_STREAMS = 20;

function eventKind(event: LedgerEvent): string {
  switch (event.type) {
    case 'AttemptFinished':
      return `${event.type}:${event.outcome}`;
    case 'ReconciliationChecked':
      return `${event.type}:${event.verdict}`;
    case 'EffectHeld':
      return `${event.type}:${event.basis ?? 'content'}`;
    case 'EffectReleased':
      return `${event.type}:${event.releasedBy === 'effectd' ? 'effectd' : 'operator'}`;
    case 'SagaFinished':
      return `${event.type}:${event.outcome}`;
    default:
      return event.type;
  }
}

/** The rows of one recorded ledger as today's readers decode them: PostgreSQL's row reader (postgres-rows.ts), SQLite's (sqlite-ledger.ts). */
function decodeRows(kind: 'postgres' | 'sqlite', rows: unknown[]): RecordedEvent[] {
  if (kind === 'sqlite') return (rows as SqliteRow[]).map(toRecorded);
  return (rows as (Omit<StoredRow, 'body'> & { body: string | null })[]).flatMap((row) => rowEvents({ ...row, body: row.body === null ? null : Buffer.from(row.body, 'base64') }));
}

function streamsOf(fixture: Fixture): Stream[] {
  const streams: Stream[] = [];
  for (const ledger of fixture.ledgers) {
    const { tools, sagaCompensationRetry } = ledger.configuration;
    const policyOf = (tool: string): ToolPolicies => {
      const policies = tools[tool];
      if (!policies) throw new Error(`${ledger.name}: no recorded policies for tool ${tool}`);
      return policies;
    };
    const saga: SagaContext = {
      retry: sagaCompensationRetry,
      definition(name, version) {
        const definition = sagas.find((s) => s.name === name);
        if (!definition) throw new Error(`saga ${name} is not defined any more`);
        if (definition.version !== version) throw new Error(`saga ${name} is at version ${definition.version}; the history ran version ${version}`);
        return definition;
      },
    };
    const byStream = new Map<string, RecordedEvent[]>();
    for (const recorded of decodeRows(ledger.kind, ledger.rows)) {
      const list = byStream.get(recorded.stream) ?? [];
      list.push(recorded);
      byStream.set(recorded.stream, list);
    }
    for (const [name, recorded] of byStream) {
      recorded.sort((a, b) => a.revision - b.revision);
      recorded.forEach((r, i) => {
        if (r.revision !== i) throw new Error(`${ledger.name}: stream ${name} has revision ${r.revision} where ${i} belongs: the recording is incomplete`);
      });
      const events = recorded.map((r) => r.event);
      const cell = ledger.cells.find((c) => c.stream === name);
      const tools = new Set(events.flatMap((e) => (e.type === 'EffectDeclared' ? [e.tool] : [])));
      streams.push({
        name, events, policyOf, saga,
        cell: cell ? `${cell.workload} × ${cell.fault} × ${cell.policy}${cell.failAt !== undefined ? ` (failAt ${cell.failAt})` : ''}` : `(${ledger.name})`,
        settleWindowMs: Math.max(0, ...[...tools].map((t) => policyOf(t).reconcile.settleWindowMs)),
      });
    }
  }
  return streams;
}

/** The times decisions are taken after an event: its own, and later ones (the settle window is the largest of the stream's tools'). */
function offsets(settleWindowMs: number): [string, number][] {
  return [['at', 0], ['at+1s', 1_000], ['at+settle+1ms', settleWindowMs + 1], ['at+1d', DAY_MS]];
}
const OFFSET_NAMES: Record<string, string> = { at: 'the event\'s own `at`', 'at+1s': '1 s later', 'at+settle+1ms': 'the largest settle window of the stream\'s tools + 1 ms later', 'at+1d': 'a day later' };

function labelOf(state: WorkflowState, effectId: string): string {
  const effect = state.effects.get(effectId)!;
  return `${effect.declared.step}/${effect.declared.slot}`;
}

/** Every decision after every event, per offset: event index → effect label (or `saga`) → decision line. */
interface Replayed {
  tables: Map<string, Map<string, string>[]>;
  final: ExpectedStream['final'];
  kinds: Map<string, Set<string>>;
  eventKinds: Set<string>;
  effects: number;
}

function replay(stream: Stream): Replayed {
  const tables = new Map<string, Map<string, string>[]>();
  const kinds = new Map<string, Set<string>>();
  const saw = (mode: string, decision: string) => {
    const set = kinds.get(mode) ?? new Set<string>();
    set.add(decision.split(' ')[0]!);
    kinds.set(mode, set);
  };
  let state = emptyWorkflow;
  const eventKinds = new Set<string>();
  stream.events.forEach((event, index) => {
    try {
      state = foldWorkflow([event], state);
    } catch (error) {
      throw new Error(`${stream.name} (${stream.cell}): event #${index} ${event.type} does not fold any more: ${(error as Error).message}`);
    }
    eventKinds.add(eventKind(event));
    for (const [name, offset] of offsets(stream.settleWindowMs)) {
      const decided = decisionsAt(state, event.at + offset, stream.policyOf, stream.saga);
      const line = new Map<string, string>();
      for (const [effectId, decisions] of Object.entries(decided.effects)) {
        line.set(labelOf(state, effectId), MODES.map((mode) => decisions[mode]).join(' | '));
        for (const mode of MODES) saw(mode, decisions[mode]);
      }
      if (decided.saga !== undefined) {
        line.set('saga', decided.saga);
        saw('saga', decided.saga);
      }
      const table = tables.get(name) ?? [];
      table.push(line);
      tables.set(name, table);
    }
  });
  const effects: Record<string, FinalEffect> = {};
  for (const effect of state.effects.values()) {
    effects[labelOf(state, effect.effectId)] = { status: effect.recordedStatus, ...(effect.receipt !== undefined ? { receipt: effect.receipt } : {}), attempts: effect.attempts.length, checks: effect.checks.length };
  }
  const saga = state.saga ? (state.saga.finished?.outcome ?? (state.saga.compensating ? 'compensating' : 'running')) : undefined;
  return { tables, final: { effects: sortedRecord(effects), ...(saga ? { saga } : {}) }, kinds, eventKinds, effects: state.effects.size };
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

/** A table as the decisions file keeps it: per event, only the lines that changed since the previous event. */
function encode(table: Map<string, string>[]): string[] {
  const lines: string[] = [];
  table.forEach((line, index) => {
    const previous = table[index - 1];
    for (const [key, value] of line) if (previous?.get(key) !== value) lines.push(`#${index} ${key}: ${value}`);
  });
  return lines;
}

function decode(lines: string[], events: number): Map<string, string>[] {
  const changes = new Map<number, [string, string][]>();
  for (const entry of lines) {
    const match = /^#(\d+) (.+?): (.*)$/.exec(entry);
    if (!match) throw new Error(`unreadable decisions line: ${entry}`);
    const list = changes.get(Number(match[1])) ?? [];
    list.push([match[2]!, match[3]!]);
    changes.set(Number(match[1]), list);
  }
  const table: Map<string, string>[] = [];
  for (let index = 0; index < events; index++) {
    const line = new Map(table[index - 1] ?? []);
    for (const [key, value] of changes.get(index) ?? []) line.set(key, value);
    table.push(line);
  }
  return table;
}

function describeEvent(stream: Stream, index: number, state?: string): string {
  const event = stream.events[index]!;
  return `event #${index} ${event.type}${'effectId' in event ? ` ${event.effectId.slice(0, 12)}…` : ''}${state ? ` ${state}` : ''}`;
}

/** Where expected and replayed decisions differ, one readable line per effect and mode. */
function differences(stream: Stream, expected: ExpectedStream, got: Replayed): string[] {
  const out: string[] = [];
  const where = `${stream.name} (${stream.cell})`;
  for (const [offset, table] of got.tables) {
    const lines = expected.decisions[offset];
    if (!lines) {
      out.push(`${where}: no expected decisions at ${offset}`);
      continue;
    }
    const want = decode(lines, table.length);
    table.forEach((line, index) => {
      const keys = new Set([...line.keys(), ...want[index]!.keys()]);
      for (const key of keys) {
        const a = want[index]!.get(key);
        const b = line.get(key);
        if (a === b) continue;
        if (a === undefined || b === undefined || key === 'saga') {
          out.push(`${where}, ${describeEvent(stream, index)}, ${offset}, ${key}: expected ${JSON.stringify(a ?? '(nothing)')}, got ${JSON.stringify(b ?? '(nothing)')}`);
          continue;
        }
        const [wa, wb] = [a.split(' | '), b.split(' | ')];
        MODES.forEach((mode, m) => {
          if (wa[m] !== wb[m]) out.push(`${where}, ${describeEvent(stream, index)}, ${offset}, effect ${key}, ${mode}: expected ${JSON.stringify(wa[m])}, got ${JSON.stringify(wb[m])}`);
        });
      }
    });
  }
  const finalWant = JSON.stringify(expected.final);
  const finalGot = JSON.stringify(got.final);
  if (finalWant !== finalGot) out.push(`${where}, after the whole stream: expected ${finalWant}, got ${finalGot}`);
  return out;
}

describe('replay of recorded histories (test/replay/fixtures)', () => {
  it('has a fixture per stored format of the PostgreSQL ledger', () => {
    for (const format of ['verbatim', 'compact', 'deflate']) expect(fixtureFiles, `test/replay/fixtures/${format}-v1.json`).toContain(`${format}-v1.json`);
  });

  describe.each(fixtureFiles)('%s', (file) => {
    const fixture = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as Fixture;
    const streams = streamsOf(fixture);
    const replayed = new Map(streams.map((s) => [s.name, replay(s)]));
    const decisionsFile = join(DIR, file.replace(/\.json$/, '.decisions.json'));

    it('says what it is: format, event version, the commit and command that recorded it', () => {
      const { header } = fixture;
      expect(file).toBe(`${header.format}-v${header.eventVersion}.json`);
      expect(header.effectdCommit).toMatch(/^[0-9a-f]{40}$/);
      expect(Number.isNaN(Date.parse(header.recordedAt))).toBe(false);
      expect(header.command).toContain('record-replay-fixtures');
      for (const stream of streams) for (const event of stream.events) expect(event.v).toBe(header.eventVersion);
    });

    it('holds more than a few effects, and every kind of history it was recorded for', () => {
      const effects = [...replayed.values()].reduce((sum, r) => sum + r.effects, 0);
      expect(streams.length).toBeGreaterThanOrEqual(MIN_STREAMS);
      expect(effects).toBeGreaterThanOrEqual(MIN_EFFECTS);
      const kinds = new Set([...replayed.values()].flatMap((r) => [...r.eventKinds]));
      expect(REQUIRED_EVENTS.filter((k) => !kinds.has(k)), 'event kinds missing from the recording').toEqual([]);
      const missing: string[] = [];
      for (const [mode, required] of Object.entries(REQUIRED_DECISIONS)) {
        const seen = new Set([...replayed.values()].flatMap((r) => [...(r.kinds.get(mode) ?? [])]));
        for (const kind of required) if (!seen.has(kind)) missing.push(`${mode} ${kind}`);
      }
      expect(missing, 'decision kinds the replay never meets').toEqual([]);
    });

    it('folds to the recorded end state, and replays to the recorded decisions at every event', () => {
      const expectedStreams: Record<string, ExpectedStream> = {};
      for (const stream of streams) {
        const got = replayed.get(stream.name)!;
        expectedStreams[stream.name] = { cell: stream.cell, final: got.final, decisions: Object.fromEntries([...got.tables].map(([offset, table]) => [offset, encode(table)])) };
      }
      if (UPDATE === 'overwrite' || (UPDATE === '1' && !existsSync(decisionsFile))) {
        const coverage: Record<string, string[]> = { events: [...new Set([...replayed.values()].flatMap((r) => [...r.eventKinds]))].sort() };
        for (const mode of [...MODES, 'saga']) coverage[mode] = [...new Set([...replayed.values()].flatMap((r) => [...(r.kinds.get(mode) ?? [])]))].sort();
        const content: ExpectedFile = {
          fixture: file,
          generatedBy: 'REPLAY_UPDATE=1 npx vitest run test/unit/replay-recorded.unit.spec.ts (test/support/replay-decisions.ts)',
          line: `#<event index> <step/slot of the effect, or saga>: ${MODES.join(' | ')} — only lines that changed since the previous event`,
          offsets: OFFSET_NAMES,
          coverage,
          streams: expectedStreams,
        };
        writeFileSync(decisionsFile, `${JSON.stringify(content, null, 1)}\n`);
      }
      if (!existsSync(decisionsFile)) throw new Error(`${decisionsFile} is missing: a new fixture's decisions are written by REPLAY_UPDATE=1 npx vitest run test/unit/replay-recorded.unit.spec.ts`);
      const expected = JSON.parse(readFileSync(decisionsFile, 'utf8')) as ExpectedFile;
      const problems: string[] = [];
      for (const stream of streams) {
        const want = expected.streams[stream.name];
        if (!want) problems.push(`${stream.name} (${stream.cell}): no recorded decisions`);
        else problems.push(...differences(stream, want, replayed.get(stream.name)!));
      }
      for (const name of Object.keys(expected.streams)) if (!replayed.has(name)) problems.push(`${name}: decisions recorded for a stream the fixture does not have`);
      if (problems.length > 0) {
        const shown = problems.slice(0, 40).join('\n  ');
        throw new Error(`${file}: ${problems.length} decision(s) differ from the recorded history's:\n  ${shown}${problems.length > 40 ? `\n  … and ${problems.length - 40} more` : ''}`);
      }
    });
  });
});
