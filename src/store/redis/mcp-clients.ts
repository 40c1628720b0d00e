/** MCP clients' declarations in Redis: one string per client key, with its own expiry (a key per client, its own hash tag). */
import type { Cluster, Redis } from 'ioredis';
import type { McpClientStore } from '../mcp-clients.ts';
import type { CommandGuard } from './ledger.ts';

export class RedisMcpClients implements McpClientStore {
  readonly #client: Redis | Cluster;
  readonly #prefix: string;
  readonly #run: CommandGuard;

  constructor(client: Redis | Cluster, keyPrefix: string, guard: CommandGuard) {
    this.#client = client;
    this.#prefix = keyPrefix;
    this.#run = guard;
  }

  async remember(key: string, json: string, ttlMs: number): Promise<void> {
    await this.#run(() => this.#client.set(`${this.#prefix}{mcpclient:${key}}`, json, 'PX', ttlMs));
  }

  recall(key: string): Promise<string | null> {
    return this.#run(() => this.#client.get(`${this.#prefix}{mcpclient:${key}}`));
  }
}
