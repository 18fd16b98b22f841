// Reads the whole ledger after a fleet run, from the PostgreSQL that takes writes (the promoted
// standby after a failover: the same multi-host, read-write connection string effectd uses), with
// effectd's own adapter so the stored (compact) form is decoded exactly as effectd reads it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger } from '../../dist/src/ledger/open-ledger.js';

export async function readLedger(url, runDir, page = 5_000) {
  const dir = join(runDir, 'checker');
  mkdirSync(dir, { recursive: true });
  const ledger = await openLedger(url, dir);
  try {
    const out = [];
    let from = 0;
    for (;;) {
      const batch = await ledger.readAll(from, page);
      if (batch.length === 0) break;
      for (const r of batch) out.push({ stream: r.stream, position: r.position, event: r.event });
      from = batch.at(-1).position;
    }
    return out;
  } finally {
    await ledger.close();
  }
}
