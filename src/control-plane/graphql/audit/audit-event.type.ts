import { Field, ID, ObjectType } from 'type-graphql';
import { PageType } from '../common/page.type';
import { JSONValue } from '../common/scalars';

@ObjectType()
export class AuditEventType {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'E-mail of the console user, or operator-cli.' })
  actor!: string;

  @Field(() => String, { description: 'e.g. key.create, key.update, key.suspend.' })
  action!: string;

  @Field(() => ID, { nullable: true })
  apiKeyId!: string | null;

  @Field(() => JSONValue, { description: 'Changed fields: {field: {from, to}}.' })
  changes!: Record<string, { from: unknown; to: unknown }>;

  @Field(() => String, { nullable: true })
  ip!: string | null;

  @Field(() => String, { description: 'ISO 8601 timestamp.' })
  createdAt!: string;
}

@ObjectType()
export class AuditEventPageType extends PageType(AuditEventType) {}
