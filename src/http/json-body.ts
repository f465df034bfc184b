import sjson from 'secure-json-parse';

/** A 4xx Fastify-style error: `toAppError` maps it to `malformed_body` with its status. */
function bodyError(message: string): Error {
  return Object.assign(new Error(message), { statusCode: 400 });
}

/**
 * Every JSON request body, on Fastify's routes and on the data plane's fast
 * path alike: secure-json-parse refuses `__proto__` and `constructor.prototype`
 * keys (as Fastify's own parser does), and a syntax error says where it is
 * (Fastify's says only that the body is not JSON).
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw bodyError("Body cannot be empty when content-type is set to 'application/json'");
  try {
    return sjson.parse(text, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw bodyError((error as Error).message);
  }
}
