// `POST /sessions` on the wire: `{ email, password }`, both strings (an absent
// or non-string one is the same 400 as an empty one, naming it).
import { isObject } from '../../core/json-edit';
import { invalid } from '../../errors';

export function loginInput(body: unknown): { email: string; password: string } {
  const record = isObject(body) ? body : {};
  if (typeof record.email !== 'string') throw invalid('email', 'email is required');
  if (typeof record.password !== 'string') throw invalid('password', 'password is required');
  return { email: record.email, password: record.password };
}
