import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: './',
    include: ['test/**/*.spec.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration suites share one PostgreSQL server and one Kafka broker on 2 cores.
    fileParallelism: false,
  },
  plugins: [swc.vite({ module: { type: 'es6' } })],
});
