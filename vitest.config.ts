import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Three tiers, one run: `npm test` runs them all; `npm run test:unit` (seconds), `test:integration`
 * and `test:browser` run one. A tier is found by what a test file does, so a new test joins the
 * right one without a change here: the browser tier drives headless Chromium (test/helpers/browser.ts,
 * or CHROMIUM_PATH itself); a test under test/unit that starts processes of its own (a built copy,
 * the server, a fresh Node) runs with the integration tier.
 */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => join(dir, file));
}

const using = (pattern: RegExp) => (path: string) => pattern.test(readFileSync(path, 'utf8'));
const BROWSER = testFiles('test/integration').filter(using(/helpers\/browser\.ts'|CHROMIUM_PATH/));
const PROCESSES = testFiles('test/unit').filter(using(/from 'node:child_process'|support\/children\.ts'/));

/** A throwaway redis-server for the tiers whose tests reach Redis (inject('redisUrl')). */
const WITH_REDIS = ['test/helpers/global-setup.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: PROCESSES, globalSetup: WITH_REDIS } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts', ...PROCESSES], exclude: BROWSER, globalSetup: WITH_REDIS },
      },
      { extends: true, test: { name: 'browser', include: BROWSER } },
    ],
  },
});
