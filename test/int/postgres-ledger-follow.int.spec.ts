// The rule the read side's follow loop stands on: a reader that pages through readAll(checkpoint)
// while several writers append reads every event exactly once. The fleet broke it (issue 30): two
// writers' rows interleaved in position (one transaction took 1 and 3, another 2), the reader read
// 1 and 3 while 2 was uncommitted, moved past 3 and never read 2 — an effect committed in the
// ledger stayed `unknown` in another instance's views. Here four pools write transactions of
// several statements (a batch naming a stream twice goes one append per savepoint) and single
// appends at once, and a fifth follows them the way the open-effects projection does.
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import { declared } from '../support/events.js';
import { testPostgresUrl } from '../support/services.js';

const schema = `follow_${process.pid}_${Date.now().toString(36)}`;
const ledgers: PostgresLedger[] = [];
afterAll(async () => {
  await ledgers[0]?.dropSchema();
  await Promise.all(ledgers.map((l) => l.close()));
});

describe('PostgresLedger.readAll under concurrent writers', () => {
  it('a follower paging from its checkpoint reads every event of four concurrent writers exactly once', async () => {
    for (let i = 0; i < 5; i++) ledgers.push(await PostgresLedger.open({ connectionString: testPostgresUrl(), schema, poolSize: 4 }));
    const [reader, ...writers] = ledgers as [PostgresLedger, ...PostgresLedger[]];
    const ROUNDS = 60;
    let writing = true;
    const seen: string[] = [];
    let checkpoint = 0;
    const follow = async () => {
      for (;;) {
        const page = await reader.readAll(checkpoint, 500);
        for (const r of page) {
          seen.push(`${r.stream}@${r.revision}`);
          checkpoint = r.position;
        }
        if (page.length === 0 && !writing) return;
      }
    };
    const write = async (w: number) => {
      const ledger = writers[w]!;
      for (let round = 0; round < ROUNDS; round++) {
        const a = `w${w}-r${round}-a`;
        const b = `w${w}-r${round}-b`;
        // A stream named twice: one transaction, a savepoint and an INSERT per request, other writers' INSERTs in between.
        await ledger.appendMany([
          { stream: a, events: [declared(`eff-${a}-0`)], expectedRevision: -1 },
          { stream: b, events: [declared(`eff-${b}-0`)], expectedRevision: -1 },
          { stream: a, events: [declared(`eff-${a}-1`)], expectedRevision: 0 },
        ]);
        await ledger.append(`w${w}-r${round}-c`, [declared(`eff-w${w}-r${round}-c`)], -1);
      }
    };
    const followed = follow();
    await Promise.all(writers.map((_, w) => write(w)));
    writing = false;
    await followed;
    const expected = writers.flatMap((_, w) => Array.from({ length: ROUNDS }, (_, round) => [`w${w}-r${round}-a@0`, `w${w}-r${round}-b@0`, `w${w}-r${round}-a@1`, `w${w}-r${round}-c@0`]).flat());
    const missing = expected.filter((e) => !seen.includes(e));
    expect(missing, `${missing.length} event(s) the follower never read`).toEqual([]);
    expect(seen.length, 'the follower read an event twice').toBe(expected.length);
  }, 120_000);
});
