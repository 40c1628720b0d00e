/** Tracing off (docs/tracing.md): without an exporter endpoint the process loads none of the OpenTelemetry SDK. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tracingWanted } from '../../src/config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const execFileAsync = promisify(execFile);

/** Runs the fixture in a fresh process with `env` (and none of this process's OTEL_* variables). */
async function loadedModules(env: Record<string, string>): Promise<{ status: number; sdkModules: number }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', 'test/fixtures/opentelemetry-loaded.ts'], {
    cwd: ROOT,
    env: { ...base, ...env },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as { status: number; sdkModules: number };
}

describe('tracing off', () => {
  it('loads no module of the OpenTelemetry SDK when no exporter endpoint is set, and loads the SDK when one is', async () => {
    expect(await loadedModules({})).toEqual({ status: 200, sdkModules: 0 });
    // An endpoint nobody listens on: the call still answers, and the SDK is there.
    const traced = await loadedModules({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_BSP_EXPORT_TIMEOUT: '500',
      OTEL_EXPORTER_OTLP_TIMEOUT: '500',
    });
    expect(traced.status).toBe(200);
    expect(traced.sdkModules).toBeGreaterThan(10);
  }, 60_000);

  it("follows OpenTelemetry's variables: an endpoint or an exporter turns it on; none or OTEL_SDK_DISABLED turn it off", () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_SERVICE_NAME: 'toolport', OTEL_TRACES_SAMPLER: 'always_on' })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBe(false);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });
});
