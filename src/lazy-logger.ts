/**
 * A request's logger, made on first use. Fastify builds a pino child per request to carry the
 * request id; most requests never log at an enabled level, yet a real child per request measured
 * ≈ 2.3 µs more CPU per request through Fastify (docs/design.md, "Hand-written or a library").
 * This stands in for the child: a call at a level that is off costs a level check, and the real
 * child (same bindings, same options) is made the first time something is written or asked for.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

type LogMethod = (...args: unknown[]) => void;

/** What a lazy child needs of its parent: pino's logger, or another lazy child. */
export interface ParentLogger {
  readonly level: string;
  isLevelEnabled(level: string): boolean;
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger;
}

export class LazyChildLogger implements FastifyBaseLogger {
  readonly #parent: ParentLogger;
  #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: Logger | null = null;

  constructor(parent: ParentLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  /** The real pino child (made now if it was not yet). */
  get real(): Logger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.#child === null && this.#options.level === undefined ? this.#parent.isLevelEnabled(level) : this.real.isLevelEnabled(level);
  }

  bindings(): Bindings {
    return this.real.bindings();
  }

  /** Adds bindings to this logger itself (pino's setBindings), without a child: the caller once its key is checked. */
  setBindings(bindings: Bindings): void {
    if (this.#child === null) this.#bindings = { ...this.#bindings, ...bindings };
    else this.#child.setBindings(bindings);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }

  #write(level: Level, args: unknown[]): void {
    if (this.isLevelEnabled(level)) (this.real[level] as LogMethod)(...args);
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}
}
