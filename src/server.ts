/** The process: read the configuration, build the app, listen, and close with grace on SIGTERM/SIGINT. */
import closeWithGrace from 'close-with-grace';
import { buildApp, createLogger } from './app/index.ts';
import { loadConfig, type Config } from './config.ts';
import { stopTracing } from './tracing/index.ts';
import { ConfigError, PluginLoadError, ToolDefinitionError, ToolsFileError } from './errors.ts';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`toolport: bad configuration: ${err.message}\n`);
    process.exit(1);
  }
  const log = createLogger(config);
  let app;
  try {
    app = await buildApp(config, { logger: log });
  } catch (err) {
    if (!(err instanceof ToolDefinitionError || err instanceof PluginLoadError || err instanceof ConfigError || err instanceof ToolsFileError)) throw err;
    process.stderr.write(`toolport: ${err instanceof ConfigError ? 'bad configuration: ' : ''}${err.message}\n`);
    process.exit(1);
  }
  const { store, registry } = app.toolport;
  if (config.apiKeysFile === null && config.authIssuer === null) log.warn('no API_KEYS_FILE: every route is open to anyone who can reach this port');

  // SIGTERM/SIGINT: stop accepting, let in-flight calls finish (up to SHUTDOWN_GRACE_MS), close Redis, exit 0.
  // Past the grace period, or on a second signal, exit 1 at once: leases of unfinished calls lapse.
  closeWithGrace({ delay: config.shutdownGraceMs, logger: log }, async ({ signal, err }) => {
    if (err !== undefined) log.error({ err }, 'closing after an uncaught error');
    else log.info({ signal }, 'closing: finishing in-flight calls');
    await app.close();
    await stopTracing(); // exports the spans still buffered
  });

  await app.listen({ port: config.port, host: config.host });
  log.info({ tools: registry.list().length, store: store.kind }, 'toolport is serving');
}

main().catch((err: unknown) => {
  process.stderr.write(`toolport: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
