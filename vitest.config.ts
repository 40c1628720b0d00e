import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Three tiers, one run: `npm test` runs them all; `npm run test:unit` (seconds), `test:integration`
 * and `test:browser` run one. The browser tier is every test that drives headless Chromium (through
 * test/helpers/browser.ts, or launching it itself with CHROMIUM_PATH), found by reading the test files, so a new one
 * joins it without a change here.
 */
const INTEGRATION = 'test/integration';
const BROWSER_TESTS = readdirSync(INTEGRATION, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => join(INTEGRATION, file))
  .filter((path) => /helpers\/browser\.ts'|CHROMIUM_PATH/.test(readFileSync(path, 'utf8')));

/** A throwaway redis-server for the tiers whose tests reach Redis (inject('redisUrl')). */
const WITH_REDIS = ['test/helpers/global-setup.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], globalSetup: WITH_REDIS } },
      { extends: true, test: { name: 'integration', include: [`${INTEGRATION}/**/*.test.ts`], exclude: BROWSER_TESTS, globalSetup: WITH_REDIS } },
      { extends: true, test: { name: 'browser', include: BROWSER_TESTS } },
    ],
  },
});
