import { Field, InputType } from 'type-graphql';
import { RateLimitInput } from './rate-limit.type';

@InputType()
export class CreateApiKeyInput {
  @Field(() => String, { description: '1–64 characters, unique among the account’s live keys.' })
  name!: string;

  @Field(() => String, { description: '部门 | 业务线 | 成本中心' })
  dimension!: string;

  @Field(() => [String], { description: 'Non-empty; catalog model names.' })
  modelScope!: string[];

  @Field(() => String, { nullable: true, description: 'Last valid day YYYY-MM-DD (today or later); null = never expires.' })
  expiresAt?: string | null;

  @Field(() => RateLimitInput, { nullable: true, description: 'null = no limit; absent = unchanged (on create: the account default for new keys).' })
  rateLimit?: RateLimitInput | null;
}
