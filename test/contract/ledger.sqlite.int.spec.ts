import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import type { Ledger } from '../../src/ledger/ledger.port.js';
import { ledgerContract } from './ledger.contract.js';

const files = new WeakMap<Ledger, string>();

ledgerContract('sqlite', () => ({
  capabilities: { appendMany: true, readStreams: true, locateEffect: true },
  async open() {
    const file = join(mkdtempSync(join(tmpdir(), 'effectd-ledger-')), 'ledger.db');
    const ledger = new SqliteLedger(file);
    files.set(ledger, file);
    return ledger;
  },
  async openSecond(first) {
    return new SqliteLedger(files.get(first)!);
  },
  async dispose(ledger) {
    await ledger.close();
  },
}));
