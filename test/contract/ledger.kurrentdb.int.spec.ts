import { KurrentDBLedger } from '../../src/ledger/kurrentdb-ledger.js';
import type { Ledger } from '../../src/ledger/ledger.port.js';
import { KURRENTDB_CAPABILITIES, ledgerContract } from './ledger.contract.js';

/**
 * The one ledger contract suite against a real KurrentDB / EventStoreDB server. Runs when
 * EFFECTD_KURRENTDB_URL is set (e.g. `docker compose up kurrentdb`, then
 * EFFECTD_KURRENTDB_URL=kurrentdb://127.0.0.1:2113?tls=false); otherwise it is reported as skipped,
 * never as passed. Each harness instance writes under its own stream namespace, so tests (and runs)
 * sharing one server never see each other's streams.
 */
const url = process.env.EFFECTD_KURRENTDB_URL;
const SKIP_REASON =
  'EFFECTD_KURRENTDB_URL is not set — no KurrentDB server can be installed on these machines (not in any registry they reach); ' +
  'run docker compose up kurrentdb and set EFFECTD_KURRENTDB_URL=kurrentdb://127.0.0.1:2113?tls=false';

const namespaces = new WeakMap<Ledger, string>();
let n = 0;

ledgerContract('kurrentdb', () => {
  if (!url) return { skip: SKIP_REASON };
  return {
    capabilities: KURRENTDB_CAPABILITIES,
    async open() {
      const namespace = `effectdtest_${process.pid}_${Date.now()}_${++n}`;
      const ledger = await KurrentDBLedger.open({ connectionString: url, namespace });
      namespaces.set(ledger, namespace);
      return ledger;
    },
    async openSecond(first) {
      return KurrentDBLedger.open({ connectionString: url, namespace: namespaces.get(first)! });
    },
    async dispose(ledger) {
      await ledger.close();
    },
  };
});
