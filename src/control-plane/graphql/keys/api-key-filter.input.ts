import { Field, InputType } from 'type-graphql';

@InputType()
export class ApiKeyFilterInput {
  @Field(() => String, { nullable: true, description: 'active | suspended | cancelled | expired' })
  status?: string | null;

  @Field(() => String, { nullable: true, description: '部门 | 业务线 | 成本中心' })
  dimension?: string | null;

  @Field(() => String, { nullable: true, description: 'Name contains (case-insensitive).' })
  q?: string | null;
}
