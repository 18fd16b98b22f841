import { PostgresLedger } from '../../src/ledger/postgres-ledger.js';
import type { Ledger } from '../../src/ledger/ledger.port.js';
import { ledgerContract } from './ledger.contract.js';
import { testPostgresUrl } from '../support/services.js';

const schemas = new WeakMap<Ledger, string>();
let n = 0;

ledgerContract('postgres', () => ({
  capabilities: { appendMany: true, readStreams: true, locateEffect: true },
  async open() {
    const schema = `contract_${process.pid}_${++n}`;
    const ledger = await PostgresLedger.open({ connectionString: testPostgresUrl(), schema });
    schemas.set(ledger, schema);
    return ledger;
  },
  async openSecond(first) {
    return PostgresLedger.open({ connectionString: testPostgresUrl(), schema: schemas.get(first)! });
  },
  async dispose(ledger) {
    await (ledger as PostgresLedger).dropSchema();
    await ledger.close();
  },
}));
