// An effectd configuration as a project writes it: its own provider, tools, compensation and saga.
//   node_modules/.bin/effectd config check ./effectd.config.mjs   (never a bare `npx effectd`: the
//   node_modules/.bin/effectd start --config ./effectd.config.mjs   name is not claimed on npm)
// (EFFECTD_PROVIDER_WAREHOUSE_URL=http://… points the provider elsewhere, e.g. a test's port.)
import { defineCompensation, defineConfig, defineSaga, defineTool, z } from 'effectd';

const reserveStock = defineTool({
  name: 'warehouse.reserve',
  description: 'Reserve stock for an order (the warehouse deduplicates on Idempotency-Key for 24 h).',
  provider: 'warehouse',
  request: { method: 'POST', path: '/reservations', body: { order: '{args.orderId}', sku: '{args.sku}', quantity: '{args.quantity}', reference: '{ref}' } },
  args: { orderId: { type: 'string', minLength: 1 }, sku: { type: 'string', minLength: 1 }, quantity: { type: 'integer', min: 1 } },
  target: 'order {args.orderId}',
  reversibility: 'compensable',
  idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 86_400_000 },
  reference: { kind: 'body-path', path: 'reference' },
  lookup: { by: 'reference', path: '/reservations?reference={ref}', resultsPath: 'reservations', receiptPath: 'id', consistent: true },
  receiptPath: 'id',
  timeoutMs: 5_000,
  settleWindowMs: 10_000,
});

const releaseStock = defineTool({
  name: 'warehouse.release',
  description: 'Release a reservation (releasing twice is answered as already released).',
  provider: 'warehouse',
  request: { method: 'POST', path: '/reservations/{args.reservationId}/release' },
  args: { reservationId: { type: 'string', minLength: 1 } },
  target: 'reservation {args.reservationId}',
  reversibility: 'idempotent',
  idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 86_400_000 },
  receiptPath: 'id',
});

const shipOrder = defineTool({
  name: 'warehouse.ship',
  description: 'Hand the order to the carrier: it cannot be called back.',
  provider: 'warehouse',
  request: { method: 'POST', path: '/shipments', body: { order: '{args.orderId}', address: '{args.address}' } },
  args: { orderId: { type: 'string', minLength: 1 }, address: { type: 'text' } },
  target: 'order {args.orderId}',
  reversibility: 'irreversible',
  idempotency: { kind: 'header', header: 'Idempotency-Key', retentionMs: 86_400_000 },
  receiptPath: 'id',
});

const releaseReservation = defineCompensation({
  name: 'release-reservation',
  tool: 'warehouse.release',
  reversibility: 'idempotent',
  args: (reservationId) => ({ reservationId }),
});

const fulfilOrder = defineSaga({
  name: 'fulfil-order',
  version: 1,
  description: 'Reserve the stock, then ship; a refused shipment releases the reservation.',
  input: z.object({ orderId: z.string().min(1), sku: z.string().min(1), quantity: z.number().int().min(1), address: z.string().min(1) }),
  steps: [
    { name: 'reserve', tool: 'warehouse.reserve', reversibility: 'compensable', compensation: releaseReservation, args: (order) => ({ orderId: order.orderId, sku: order.sku, quantity: order.quantity }) },
    { name: 'ship', tool: 'warehouse.ship', reversibility: 'irreversible', args: (order) => ({ orderId: order.orderId, address: order.address }) },
  ],
});

export default defineConfig({
  providers: { warehouse: { baseUrl: 'http://127.0.0.1:4400' } },
  tools: [reserveStock, releaseStock, shipOrder],
  sagas: [fulfilOrder],
  // builtinTools: true,   // also run the built-in simulated providers' tools (payments.charge, email.send, …)
});
