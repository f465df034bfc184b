import { Field, ObjectType } from 'type-graphql';
import { ApiKeyType } from './api-key.type';

@ObjectType({ description: 'The only place the full secret ever appears.' })
export class CreateApiKeyPayload {
  @Field(() => ApiKeyType)
  apiKey!: ApiKeyType;

  @Field(() => String, { description: 'The full API key secret; shown once.' })
  secret!: string;
}
