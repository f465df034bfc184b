import { Field, ObjectType } from 'type-graphql';
import { ApiKeyType } from './api-key.type';

@ObjectType({ description: 'A rotation: the successor with its secret (shown once), and the old key as it now reads.' })
export class RotateApiKeyPayload {
  @Field(() => ApiKeyType, { description: 'The successor; its rotatedFrom names the old key.' })
  apiKey!: ApiKeyType;

  @Field(() => String, { description: 'The successor’s full secret; shown once.' })
  secret!: string;

  @Field(() => ApiKeyType, { description: 'The old key: rotatedTo, and cancelsAt unless the rotation was an emergency.' })
  previous!: ApiKeyType;
}
