import { Field, ID, ObjectType } from 'type-graphql';
import { PageType } from '../common/page.type';
import { SafeInt } from '../common/scalars';
import { RateLimitType } from './rate-limit.type';

@ObjectType({ description: 'An API key as the console shows it; never carries the secret.' })
export class ApiKeyType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'One of 部门, 业务线, 成本中心.' })
  dimension!: string;

  @Field(() => String, { description: 'active | suspended | cancelled | expired' })
  status!: string;

  @Field(() => String, { nullable: true, description: 'owner | credit_limit while suspended, else null.' })
  suspendedReason!: string | null;

  @Field(() => SafeInt, { description: 'Lifetime unified tokens (input + output).' })
  usedTokens!: number;

  @Field(() => [String])
  modelScope!: string[];

  @Field(() => String, { nullable: true, description: 'Last valid day, YYYY-MM-DD; null = never expires.' })
  expiresAt!: string | null;

  @Field(() => RateLimitType, { nullable: true, description: 'Requests and tokens per minute and concurrent requests; null = no limit.' })
  rateLimit!: RateLimitType | null;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD HH:MM:SS in the account time zone.' })
  lastUsedAt!: string | null;

  @Field(() => String, { description: 'ISO 8601 timestamp.' })
  createdAt!: string;

  @Field(() => String, { description: 'A display hint such as tsxt-abcd…wxyz.' })
  secretHint!: string;

  @Field(() => String, { nullable: true, description: 'The key this one replaced by rotation; null otherwise.' })
  rotatedFrom!: string | null;

  @Field(() => String, { nullable: true, description: 'The key that replaced this one by rotation; null otherwise.' })
  rotatedTo!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'ISO 8601: when a rotated-away key’s grace ends and it is cancelled; null when no grace runs.',
  })
  cancelsAt!: string | null;
}

@ObjectType()
export class ApiKeyPageType extends PageType(ApiKeyType) {}
