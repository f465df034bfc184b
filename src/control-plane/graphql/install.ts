import { Readable } from 'node:stream';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { GraphQLError, Kind, visit, type DocumentNode } from 'graphql';
import { ApolloServerPluginLandingPageDisabled, ApolloServerPluginUsageReportingDisabled } from '@apollo/server/plugin/disabled';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../app';
import type { Actor } from '../../domain/actor';
import { AppError, toAppError } from '../../errors';
import { fromFastify } from '../rest/rest-errors';
import type { GraphqlContext } from './context';
import { costLimitRule } from './cost-limit.rule';
import { depthLimitRule } from './depth-limit.rule';
import { findAppError, formatGraphqlError, isClientError } from './graphql-errors';
import { buildGraphqlSchema } from './schema';

/** Serves the control-plane GraphQL API at GET and POST /graphql. */
export async function installGraphql(server: FastifyInstance, services: Services): Promise<{ stop(): Promise<void> }> {
  const apollo = new ApolloServer<GraphqlContext>({
    schema: await buildGraphqlSchema(),
    introspection: true,
    includeStacktraceInErrorResponses: false,
    // main.ts owns SIGTERM/SIGINT and drains first; Apollo's own handler would
    // stop it early and re-raise the signal, killing the process mid-drain.
    stopOnTerminationSignals: false,
    validationRules: [depthLimitRule(), costLimitRule()],
    formatError: formatGraphqlError,
    logger: server.log.child({ component: 'graphql' }),
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      {
        // Unexpected failures are logged with the request id; clients only see `internal_error`.
        async requestDidStart() {
          return {
            // The schema is for signed-in users (and the console's codegen): introspection needs a session.
            async didResolveOperation({ document, contextValue }) {
              if (contextValue.actor === null && introspects(document)) {
                const error = new AppError('authentication', 'missing_session', 'Introspection needs a console session token (Authorization: Bearer …)');
                throw new GraphQLError(error.message, { originalError: error, extensions: { http: { status: error.status } } });
              }
            },
            async didEncounterErrors({ contextValue, errors }) {
              for (const error of errors) {
                const appError = findAppError(error);
                if (appError ? appError.status >= 500 : !isClientError(error)) {
                  contextValue.log.error({ err: appError?.cause ?? error.originalError ?? error }, 'graphql operation failed');
                }
              }
            },
          };
        },
      },
    ],
  });
  await apollo.start();

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const query = request.url.indexOf('?');
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: request.method, headers, search: query < 0 ? '' : request.url.slice(query), body: request.body },
      context: () => contextFor(request, services),
    });
    for (const [name, value] of response.headers) void reply.header(name, value);
    void reply.code(response.status ?? 200);
    if (response.body.kind === 'complete') return reply.send(response.body.string);
    return reply.send(Readable.from(response.body.asyncIterator));
  };

  await server.register(async (scope) => {
    // Bodies Fastify refuses (bad JSON, too large) still answer in GraphQL's error shape.
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      const appError = fromFastify(error) ?? toAppError(error);
      if (appError.status >= 500) request.log.error({ err: error }, 'graphql request failed');
      void reply.code(appError.status).send({ errors: [formatGraphqlError({ message: appError.message }, appError)] });
    });
    scope.route({ method: ['GET', 'POST'], url: '/graphql', handler: handle });
  });

  return { stop: () => apollo.stop() };
}

/** Whether a document asks for `__schema` or `__type` anywhere (`__typename` is not introspection). */
function introspects(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    [Kind.FIELD](node) {
      if (node.name.value === '__schema' || node.name.value === '__type') found = true;
    },
  });
  return found;
}

async function contextFor(request: FastifyRequest, services: Services): Promise<GraphqlContext> {
  const authorization = request.headers.authorization;
  let actor: Actor | null = null;
  if (authorization !== undefined) {
    try {
      actor = await services.sessions.authenticate(authorization, request.ip);
    } catch (error) {
      // A bad session only matters to operations that need one; they re-raise the 401.
      if (!(error instanceof AppError && error.kind === 'authentication')) throw error;
    }
  }
  return { actor, services, ip: request.ip, authorization, log: request.log };
}
