import { Readable } from 'node:stream';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { GraphQLError, Kind, visit, type DocumentNode } from 'graphql';
import { ApolloServerPluginLandingPageDisabled, ApolloServerPluginUsageReportingDisabled } from '@apollo/server/plugin/disabled';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { appError, reportedError } from '../../errors';
import type { ControlPlaneServices } from '../control-plane-services';
import { optionalSession } from '../session-first';
import type { GraphqlContext } from './common/context';
import { costLimitRule } from './cost-limit.rule';
import { depthLimitRule } from './depth-limit.rule';
import { findAppError, formatGraphqlError, isClientError, withoutSuggestions } from './graphql-errors';
import { ANONYMOUS_QUERY_TOKENS, PARSE_OPTIONS, anonymousQueryTooLarge, withinTokens } from './query-limits';
import { buildGraphqlSchema } from './schema';

/** Serves the control-plane GraphQL API at GET and POST /graphql. */
export async function installGraphql(server: FastifyInstance, services: ControlPlaneServices): Promise<{ stop(): Promise<void> }> {
  const apollo = new ApolloServer<GraphqlContext>({
    schema: await buildGraphqlSchema(services),
    introspection: true,
    includeStacktraceInErrorResponses: false,
    // main.ts owns SIGTERM/SIGINT and drains first; Apollo's own handler would
    // stop it early and re-raise the signal, killing the process mid-drain.
    stopOnTerminationSignals: false,
    validationRules: [depthLimitRule(), costLimitRule()],
    parseOptions: PARSE_OPTIONS,
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
                const error = appError('missingSession');
                throw new GraphQLError(error.message, { originalError: error, extensions: { http: { status: error.status } } });
              }
            },
            async didEncounterErrors({ contextValue, errors }) {
              // "Did you mean …" names the schema's fields, arguments, types and enum values: for signed-in users only.
              if (contextValue.actor === null) for (const error of errors) error.message = withoutSuggestions(error.message);
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
    // Apollo would parse up to a signed-in user's token limit; a caller without a session gets far fewer.
    if (request.actor === null) {
      const query = queryText(request);
      if (query !== undefined && !withinTokens(query, ANONYMOUS_QUERY_TOKENS)) throw anonymousQueryTooLarge();
    }
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const query = request.url.indexOf('?');
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: request.method, headers, search: query < 0 ? '' : request.url.slice(query), body: request.body },
      context: async (): Promise<GraphqlContext> => ({
        actor: request.actor,
        sessions: services.sessions,
        gate: services.controlPlane,
        ip: request.ip,
        authorization: request.headers.authorization,
        log: request.log,
      }),
    });
    for (const [name, value] of response.headers) void reply.header(name, value);
    void reply.code(response.status ?? 200);
    if (response.body.kind === 'complete') return reply.send(response.body.string);
    return reply.send(Readable.from(response.body.asyncIterator));
  };

  await server.register(async (scope) => {
    // Bodies Fastify refuses (bad JSON, too large) still answer in GraphQL's error shape.
    scope.setErrorHandler((error, request, reply) => {
      const appError = reportedError(error, request.log, 'graphql request failed');
      void reply
        .code(appError.status)
        .headers(appError.headers)
        .send({ errors: [formatGraphqlError({ message: appError.message }, appError)] });
    });
    scope.decorateRequest('actor', null);
    // The session is looked up before the body is read: its allowance (and the query's token limit) depends on it.
    scope.addHook('onRequest', async (request) => {
      request.actor = await optionalSession(services.sessions, request);
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

/** The document of a POST body or a GET query string, if the request carries one. */
function queryText(request: FastifyRequest): string | undefined {
  if (request.method === 'GET') {
    const at = request.url.indexOf('?');
    return at < 0 ? undefined : (new URLSearchParams(request.url.slice(at)).get('query') ?? undefined);
  }
  const body = request.body as { query?: unknown } | null | undefined;
  return typeof body?.query === 'string' ? body.query : undefined;
}
