// The application in memory (memory-app.ts) behind its HTTP door on loopback, with an SDK client of
// its agent credential: what a framework adapter's test talks to.
import { startHttpServer, type HttpServer } from '../../src/api/http-server.js';
import { HttpEffectClient } from '../../src/sdk/http-effect-client.js';
import { memoryApp, type MemoryApp, type MemoryAppOptions } from './memory-app.js';

export interface HttpMemoryApp {
  memory: MemoryApp;
  http: HttpServer;
  client: HttpEffectClient;
  close(): Promise<void>;
}

export async function httpMemoryApp(options: MemoryAppOptions = {}): Promise<HttpMemoryApp> {
  const memory = memoryApp(options);
  const http = await startHttpServer(memory.app, 0);
  const client = new HttpEffectClient({ url: http.url, token: memory.tokens.agent, timeoutMs: 10_000 });
  return {
    memory, http, client,
    close: async () => {
      await http.close();
      await memory.close();
    },
  };
}
