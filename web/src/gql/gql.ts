/* eslint-disable */
import * as types from './graphql';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "fragment KeyRow on ApiKeyType {\n  id\n  name\n  dimension\n  status\n  suspendedReason\n  usedTokens\n  modelScope\n  expiresAt\n  lastUsedAt\n  createdAt\n  secretHint\n  rotatedFrom\n  rotatedTo\n  cancelsAt\n}\n\nquery KeysPage($filter: ApiKeyFilterInput, $page: Int!, $pageSize: Int!, $sort: String!, $order: String!, $month: String!, $withMonthAmounts: Boolean!) {\n  apiKeys(\n    filter: $filter\n    page: $page\n    pageSize: $pageSize\n    sort: $sort\n    order: $order\n  ) {\n    total\n    page\n    pageSize\n    items {\n      ...KeyRow\n    }\n  }\n  creditStatus {\n    creditLimit\n    currency\n    month\n    monthUsed\n    reserved\n    remaining\n    suspended\n  }\n  creditAlerts {\n    thresholds\n    month\n    reachedThreshold\n  }\n  settlement(month: $month) @include(if: $withMonthAmounts) {\n    month\n    keys {\n      apiKeyId\n      totalAmount\n    }\n  }\n}\n\nmutation CreateApiKey($input: CreateApiKeyInput!) {\n  createApiKey(input: $input) {\n    secret\n    apiKey {\n      ...KeyRow\n    }\n  }\n}\n\nmutation UpdateApiKey($id: ID!, $input: UpdateApiKeyInput!) {\n  updateApiKey(id: $id, input: $input) {\n    ...KeyRow\n  }\n}\n\nmutation SuspendApiKey($id: ID!) {\n  suspendApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation ResumeApiKey($id: ID!) {\n  resumeApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation CancelApiKey($id: ID!) {\n  cancelApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation RotateApiKey($id: ID!, $input: RotateApiKeyInput) {\n  rotateApiKey(id: $id, input: $input) {\n    secret\n    apiKey {\n      ...KeyRow\n    }\n    previous {\n      ...KeyRow\n    }\n  }\n}": typeof types.KeyRowFragmentDoc,
    "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    token\n    expiresAt\n  }\n}\n\nmutation Logout {\n  logout\n}\n\nquery ConsoleContext {\n  viewer {\n    id\n    email\n    role\n    account {\n      id\n      name\n      timezone\n      currency\n      creditLimit\n    }\n  }\n  models {\n    name\n    displayName\n  }\n  creditStatus {\n    month\n    creditLimit\n  }\n}": typeof types.LoginDocument,
    "query KeyUsage($id: ID!, $start: String, $end: String) {\n  keyUsage(id: $id, start: $start, end: $end) {\n    apiKeyId\n    start\n    end\n    currency\n    calls\n    totalTokens\n    totalAmount\n    tiers {\n      tier\n      tokens\n      unitPrice\n      amount\n    }\n  }\n}": typeof types.KeyUsageDocument,
};
const documents: Documents = {
    "fragment KeyRow on ApiKeyType {\n  id\n  name\n  dimension\n  status\n  suspendedReason\n  usedTokens\n  modelScope\n  expiresAt\n  lastUsedAt\n  createdAt\n  secretHint\n  rotatedFrom\n  rotatedTo\n  cancelsAt\n}\n\nquery KeysPage($filter: ApiKeyFilterInput, $page: Int!, $pageSize: Int!, $sort: String!, $order: String!, $month: String!, $withMonthAmounts: Boolean!) {\n  apiKeys(\n    filter: $filter\n    page: $page\n    pageSize: $pageSize\n    sort: $sort\n    order: $order\n  ) {\n    total\n    page\n    pageSize\n    items {\n      ...KeyRow\n    }\n  }\n  creditStatus {\n    creditLimit\n    currency\n    month\n    monthUsed\n    reserved\n    remaining\n    suspended\n  }\n  creditAlerts {\n    thresholds\n    month\n    reachedThreshold\n  }\n  settlement(month: $month) @include(if: $withMonthAmounts) {\n    month\n    keys {\n      apiKeyId\n      totalAmount\n    }\n  }\n}\n\nmutation CreateApiKey($input: CreateApiKeyInput!) {\n  createApiKey(input: $input) {\n    secret\n    apiKey {\n      ...KeyRow\n    }\n  }\n}\n\nmutation UpdateApiKey($id: ID!, $input: UpdateApiKeyInput!) {\n  updateApiKey(id: $id, input: $input) {\n    ...KeyRow\n  }\n}\n\nmutation SuspendApiKey($id: ID!) {\n  suspendApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation ResumeApiKey($id: ID!) {\n  resumeApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation CancelApiKey($id: ID!) {\n  cancelApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation RotateApiKey($id: ID!, $input: RotateApiKeyInput) {\n  rotateApiKey(id: $id, input: $input) {\n    secret\n    apiKey {\n      ...KeyRow\n    }\n    previous {\n      ...KeyRow\n    }\n  }\n}": types.KeyRowFragmentDoc,
    "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    token\n    expiresAt\n  }\n}\n\nmutation Logout {\n  logout\n}\n\nquery ConsoleContext {\n  viewer {\n    id\n    email\n    role\n    account {\n      id\n      name\n      timezone\n      currency\n      creditLimit\n    }\n  }\n  models {\n    name\n    displayName\n  }\n  creditStatus {\n    month\n    creditLimit\n  }\n}": types.LoginDocument,
    "query KeyUsage($id: ID!, $start: String, $end: String) {\n  keyUsage(id: $id, start: $start, end: $end) {\n    apiKeyId\n    start\n    end\n    currency\n    calls\n    totalTokens\n    totalAmount\n    tiers {\n      tier\n      tokens\n      unitPrice\n      amount\n    }\n  }\n}": types.KeyUsageDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "fragment KeyRow on ApiKeyType {\n  id\n  name\n  dimension\n  status\n  suspendedReason\n  usedTokens\n  modelScope\n  expiresAt\n  lastUsedAt\n  createdAt\n  secretHint\n  rotatedFrom\n  rotatedTo\n  cancelsAt\n}\n\nquery KeysPage($filter: ApiKeyFilterInput, $page: Int!, $pageSize: Int!, $sort: String!, $order: String!, $month: String!, $withMonthAmounts: Boolean!) {\n  apiKeys(\n    filter: $filter\n    page: $page\n    pageSize: $pageSize\n    sort: $sort\n    order: $order\n  ) {\n    total\n    page\n    pageSize\n    items {\n      ...KeyRow\n    }\n  }\n  creditStatus {\n    creditLimit\n    currency\n    month\n    monthUsed\n    reserved\n    remaining\n    suspended\n  }\n  creditAlerts {\n    thresholds\n    month\n    reachedThreshold\n  }\n  settlement(month: $month) @include(if: $withMonthAmounts) {\n    month\n    keys {\n      apiKeyId\n      totalAmount\n    }\n  }\n}\n\nmutation CreateApiKey($input: CreateApiKeyInput!) {\n  createApiKey(input: $input) {\n    secret\n    apiKey {\n      ...KeyRow\n    }\n  }\n}\n\nmutation UpdateApiKey($id: ID!, $input: UpdateApiKeyInput!) {\n  updateApiKey(id: $id, input: $input) {\n    ...KeyRow\n  }\n}\n\nmutation SuspendApiKey($id: ID!) {\n  suspendApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation ResumeApiKey($id: ID!) {\n  resumeApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation CancelApiKey($id: ID!) {\n  cancelApiKey(id: $id) {\n    ...KeyRow\n  }\n}\n\nmutation RotateApiKey($id: ID!, $input: RotateApiKeyInput) {\n  rotateApiKey(id: $id, input: $input) {\n    secret\n    apiKey {\n      ...KeyRow\n    }\n    previous {\n      ...KeyRow\n    }\n  }\n}"): typeof import('./graphql').KeyRowFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    token\n    expiresAt\n  }\n}\n\nmutation Logout {\n  logout\n}\n\nquery ConsoleContext {\n  viewer {\n    id\n    email\n    role\n    account {\n      id\n      name\n      timezone\n      currency\n      creditLimit\n    }\n  }\n  models {\n    name\n    displayName\n  }\n  creditStatus {\n    month\n    creditLimit\n  }\n}"): typeof import('./graphql').LoginDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query KeyUsage($id: ID!, $start: String, $end: String) {\n  keyUsage(id: $id, start: $start, end: $end) {\n    apiKeyId\n    start\n    end\n    currency\n    calls\n    totalTokens\n    totalAmount\n    tiers {\n      tier\n      tokens\n      unitPrice\n      amount\n    }\n  }\n}"): typeof import('./graphql').KeyUsageDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
