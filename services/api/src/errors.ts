import { AtlasError, ERROR_STATUS, errorBody } from '@atlas/core';
import type { FastifyError, FastifyInstance } from 'fastify';

/**
 * The one HTTP error handler: every failure becomes `{error: {code, message, details?}}` with the
 * status of its code (ARCHITECTURE.md "Errors"). Validation failures are 400 INVALID_REQUEST with
 * the failing fields in details.issues; unknown routes are 404 NOT_FOUND.
 */
export const registerErrorHandling = (app: FastifyInstance): void => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof AtlasError) {
      if (err.status >= 500) request.log.error({ err }, err.message);
      return reply.status(err.status).send(errorBody(err.code, err.message, err.details));
    }
    if (err.validation) {
      const issues = err.validation.map((v) => ({
        path: `${err.validationContext ?? 'request'}${v.instancePath ? v.instancePath.replaceAll('/', '.') : ''}`,
        message: v.message ?? 'invalid',
      }));
      const message = `invalid ${err.validationContext ?? 'request'}: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`;
      return reply.status(400).send(errorBody('INVALID_REQUEST', message, { issues }));
    }
    if (err.statusCode === 413) return reply.status(413).send(errorBody('PAYLOAD_TOO_LARGE', err.message));
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.status(err.statusCode).send(errorBody('INVALID_REQUEST', err.message));
    }
    request.log.error({ err }, 'unhandled error');
    return reply.status(ERROR_STATUS.INTERNAL_ERROR).send(errorBody('INTERNAL_ERROR', 'internal server error'));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(errorBody('NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} does not exist`)),
  );
};
