/** A throwaway API_KEYS_FILE: an admin key and a key limited to some tools, with their secrets. */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');

export interface TestKeys {
  file: string;
  admin: string;
  agent: string;
}

/** `ops` (admin, every tool) and `agent` (not admin, the tools matching `agentTools`). */
export async function testKeys(agentTools: string[]): Promise<TestKeys> {
  const admin = `sk-admin-${randomUUID()}`;
  const agent = `sk-agent-${randomUUID()}`;
  const dir = await mkdtemp(path.join(tmpdir(), 'toolport-keys-'));
  const file = path.join(dir, 'keys.json');
  await writeFile(
    file,
    JSON.stringify([
      { id: 'ops', key_sha256: sha(admin), tools: ['*'], admin: true },
      { id: 'agent', key_sha256: sha(agent), tools: agentTools },
    ]),
  );
  return { file, admin, agent };
}

export const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
