import { registerWorkload, workload, type IntentSpec } from '../workloads.js';

/**
 * The two workloads LIMBO's cases add to the benchmark's (workloads.ts): a write with no read-back
 * that a later step depends on, and an email whose repair rewrites its recipient.
 */
function once(name: string, register: () => void): void {
  if (!workload(name)) register();
}

function email(id: string, step: string, to: string, template: string, subject: string, text: string, rephrasings: Record<string, unknown>[]): IntentSpec {
  const args = { to, subject, text, template };
  return {
    id, tool: 'email.send', step, slot: '0', args,
    equivalents: [{ ...args, to: to.toUpperCase() }],
    rephrasings,
    identity: { kind: 'email', to, template },
    multiplicity: 1,
  };
}

once('notify-then-email', () => registerWorkload({
  name: 'notify-then-email',
  summary: 'post a chat notification (weak.notify: no key, no lookup), then — only once it is done — email the customer that the order shipped',
  providers: ['weak', 'email'],
  intents: (tag) => {
    const token = `ORD-${tag}`;
    const args = { channel: 'ops', about: `${token} shipped`, text: `${token} shipped today` };
    const to = `customer.${tag}@example.com`;
    return [
      {
        id: 'notification', tool: 'weak.notify', step: 'notify-ops', slot: '0', args,
        equivalents: [{ ...args, text: ` ${args.text}  ` }],
        rephrasings: [{ ...args, text: `${token} has shipped` }],
        identity: { kind: 'notification', channel: 'ops', token },
        multiplicity: 1,
      },
      { ...email('shipped-email', 'email-shipped', to, 'order-shipped', `Order ${token} shipped`, 'Your order is on its way.', [{ to, subject: `Your order ${token} shipped`, text: 'Your order is on its way.', template: 'order-shipped' }]), dependsOn: ['notification'] },
    ];
  },
}));

once('email-drift', () => registerWorkload({
  name: 'email-drift',
  summary: 'email one invoice to a customer; a model that repairs the call rewrites the recipient (a typo in the domain): another person\'s inbox',
  providers: ['email'],
  intents: (tag) => {
    const to = `billing.${tag}@example.com`;
    const subject = `Invoice INV-${tag}`;
    const text = 'Please find your invoice attached: 49.00 USD, due on 30 November.';
    return [email('invoice-email', 'email-invoice', to, 'invoice', subject, text, [{ to: `billing.${tag}@exmaple.com`, subject, text, template: 'invoice' }])];
  },
}));
