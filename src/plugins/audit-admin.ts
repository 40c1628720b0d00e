/**
 * Every admin action in the audit log (docs/audit.md): a request to a route marked `config.admin`
 * that changes something (not GET or HEAD) appends one entry when it is answered — who, which route,
 * and its status. Registered only when the audit log is on.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AuditSink } from '../store/audit.ts';

export const auditAdminPlugin = fp(
  async (app: FastifyInstance, { audit }: { audit: AuditSink }) => {
    app.addHook('onResponse', (request, reply, done) => {
      if (request.routeOptions.config.admin === true && request.method !== 'GET' && request.method !== 'HEAD') {
        const caller = request.caller;
        audit.record({
          kind: 'admin',
          caller: caller?.id ?? null,
          user: caller?.principal.user ?? null,
          outcome: String(reply.statusCode),
          requestId: request.id,
          detail: `${request.method} ${request.url.split('?')[0]}`,
        });
      }
      done();
    });
  },
  { name: 'toolport-audit-admin' },
);
