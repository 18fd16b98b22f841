export type RequestStatus = number | 'dropped' | 'pending';

export interface RequestLogEntry {
  seq: number;
  /** SimClock ms at receipt. */
  receivedAt: number;
  method: string;
  /** Path with query string. */
  path: string;
  idempotencyKey: string | null;
  clientToken: string | null;
  /** sha256 of the raw body, null when empty. */
  bodyDigest: string | null;
  fault: string | null;
  /** What the client got: a status, 'dropped' (socket destroyed) or 'pending' (held). */
  status: RequestStatus;
  /** For a dropped request that still executed: the status its response would have had. */
  unsentStatus: number | null;
  replayed: boolean;
  /** The client closed the connection before the response was written. */
  clientDisconnected: boolean;
}

export class RequestLog {
  private entries: RequestLogEntry[] = [];

  open(fields: Omit<RequestLogEntry, 'seq' | 'status' | 'unsentStatus' | 'replayed' | 'clientDisconnected'>): RequestLogEntry {
    const entry: RequestLogEntry = {
      seq: this.entries.length + 1,
      ...fields,
      status: 'pending',
      unsentStatus: null,
      replayed: false,
      clientDisconnected: false,
    };
    this.entries.push(entry);
    return entry;
  }

  all(): readonly RequestLogEntry[] {
    return this.entries;
  }

  clear(): void {
    this.entries = [];
  }
}
