import { Field, InputType } from 'type-graphql';
import { RateLimitInput } from './rate-limit.type';

/** Absent fields stay unchanged; an explicit `expiresAt: null` means "never expires". */
@InputType()
export class UpdateApiKeyInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  dimension?: string | null;

  @Field(() => [String], { nullable: true })
  modelScope?: string[] | null;

  @Field(() => String, { nullable: true })
  expiresAt?: string | null;

  @Field(() => RateLimitInput, { nullable: true, description: 'null = no limit; absent = unchanged (on create: the account default for new keys).' })
  rateLimit?: RateLimitInput | null;
}
