import type { Ledger } from '../ledger/ledger.port.js';

export interface OpenSaga {
  tenant: string;
  workflowId: string;
}

/** Sagas that have started and not finished, kept by catching up on the ledger's global order. */
export class OpenSagasProjection {
  private position = 0;
  private readonly open = new Map<string, OpenSaga>();

  constructor(private readonly ledger: Ledger) {}

  async catchUp(): Promise<void> {
    for (;;) {
      const page = await this.ledger.readAll(this.position, 5_000);
      for (const { stream, event, position } of page) {
        this.position = position;
        if (event.type === 'SagaStarted') this.open.set(stream, { tenant: event.tenant, workflowId: event.workflowId });
        else if (event.type === 'SagaFinished') this.open.delete(stream);
      }
      if (page.length < 5_000) return;
    }
  }

  list(): OpenSaga[] {
    return [...this.open.values()];
  }
}
