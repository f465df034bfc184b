import pino, { type Logger, type LoggerOptions } from 'pino';

// Secrets and prompt text never reach the logs: credentials are redacted by
// path, and request bodies are never logged at all.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.api_key',
  '*.apiKey',
  '*.secret',
  '*.password',
  '*.token',
  'api_key',
  'secret',
  'password',
  'token',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}
