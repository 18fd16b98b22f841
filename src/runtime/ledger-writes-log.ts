import type { WriteHealthReport } from '../ledger/write-health.js';
import type { Logger } from '../logging/logger.js';

/** The log lines of a change: an error when the ledger stops accepting writes (what refused them), info when it accepts them again. */
export function ledgerWritesChanged(logger: Pick<Logger, 'error' | 'info'>): (report: WriteHealthReport) => void {
  return (report) => {
    if (report.writable) logger.info({ event: 'LedgerWritable', by: report.by }, 'ledger: writes are accepted again; /readyz answers 200');
    else logger.error({ event: 'LedgerNotWritable', by: report.by, err: { message: report.error } }, `ledger: writes are refused (${report.error}); commands are answered 503 and /readyz 503 until it accepts them again`);
  };
}
