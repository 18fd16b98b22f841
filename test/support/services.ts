/** Where the services started by `npm run services:up` listen (override with the env vars). */
export function testPostgresUrl(): string {
  return process.env.EFFECTD_TEST_PG_URL ?? 'postgres://effectd:effectd@127.0.0.1:5432/effectd_test';
}

export function kafkaBrokers(): string[] {
  return (process.env.EFFECTD_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
}
