/** BUILTINS (docs/operations.md): the built-in groups served; `none` leaves only the caller's own tools. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { get, makeApp, post } from '../helpers/app.ts';

async function namesServed(env: Record<string, string>): Promise<string[]> {
  const app = await makeApp('memory', { env });
  try {
    return ((await get(app, '/tools')).body.tools as { name: string }[]).map((t) => t.name);
  } finally {
    await app.close();
  }
}

const workspace = mkdtempSync(join(tmpdir(), 'toolport-builtins-'));
const BUILT_IN = /^(planning_|introspect_|workspace_|result_read$)/;

describe('BUILTINS', () => {
  it('serves every group by default (workspace with WORKSPACE_ROOT)', async () => {
    const names = (await namesServed({ WORKSPACE_ROOT: workspace })).filter((name) => BUILT_IN.test(name));
    expect(names).toEqual(expect.arrayContaining(['planning_setup_plan', 'introspect_catalog', 'introspect_session', 'result_read', 'workspace_read']));
  });

  it('serves only the groups named', async () => {
    const names = (await namesServed({ BUILTINS: 'planning,results', WORKSPACE_ROOT: workspace })).filter((name) => BUILT_IN.test(name));
    expect(names.sort()).toEqual(['planning_add_step', 'planning_read_plan', 'planning_setup_plan', 'planning_update_step', 'result_read']);
  });

  it('with none, serves only your own tools, and a built-in is an unknown tool', async () => {
    const app = await makeApp('memory', { env: { BUILTINS: 'none', WORKSPACE_ROOT: workspace } });
    try {
      const names = ((await get(app, '/tools')).body.tools as { name: string }[]).map((t) => t.name);
      expect(names.filter((name) => BUILT_IN.test(name))).toEqual([]);
      expect(names).toContain('echo');
      const call = await post(app, { name: 'planning_read_plan', arguments: {} }, { 'x-session-id': 's1' });
      expect(call.body).toMatchObject({ success: false, error: { code: 'unknown_tool' } });
    } finally {
      await app.close();
    }
  });
});
