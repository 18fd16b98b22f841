import { z } from 'zod';
import { refundCharge } from '../compensations/index.js';
import { defineSaga } from '../src/core/saga/saga-definition.js';

const renewalInput = z.object({
  subscriptionId: z.string().min(1),
  period: z.string().regex(/^\d{4}-\d{2}$/, 'period is YYYY-MM'),
  email: z.email(),
  amount: z.union([z.number(), z.string()]),
  currency: z.string().length(3).default('usd'),
});
export type RenewalInput = z.infer<typeof renewalInput>;

/** Charge the period, then email the receipt (irreversible, so last). */
export const subscriptionRenewal = defineSaga<RenewalInput>({
  name: 'subscription-renewal',
  version: 1,
  description: 'Charge a subscription period, then email the receipt.',
  input: renewalInput,
  steps: [
    {
      name: 'charge', tool: 'payments.charge', reversibility: 'compensable', compensation: refundCharge,
      args: (r) => ({ invoiceId: `${r.subscriptionId}-${r.period}`, amount: r.amount, currency: r.currency, description: `Renewal ${r.period}` }),
    },
    {
      name: 'email-receipt', tool: 'email.send', reversibility: 'irreversible',
      args: (r, receipts) => ({ to: r.email, template: 'renewal-receipt', subject: `Receipt for ${r.period}`, text: `Your subscription ${r.subscriptionId} is renewed for ${r.period} (charge ${receipts.charge}).` }),
    },
  ],
});
