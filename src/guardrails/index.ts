import type { Detector } from './detector.types';
import { apiSecretDetector } from './detectors/api-secret.detector';
import { bankCardDetector } from './detectors/bank-card.detector';
import { createBlockListDetector } from './detectors/block-list.detector';
import { cnIdCardDetector } from './detectors/cn-id-card.detector';
import { cnMobileDetector } from './detectors/cn-mobile.detector';
import { emailDetector } from './detectors/email.detector';
import { promptInjectionDetector } from './detectors/prompt-injection.detector';

export type { Detector, DetectorCategory, DetectorMatch } from './detector.types';
export { apiSecretDetector } from './detectors/api-secret.detector';
export { bankCardDetector } from './detectors/bank-card.detector';
export { createBlockListDetector } from './detectors/block-list.detector';
export { cnIdCardDetector } from './detectors/cn-id-card.detector';
export { cnMobileDetector } from './detectors/cn-mobile.detector';
export { emailDetector } from './detectors/email.detector';
export { promptInjectionDetector } from './detectors/prompt-injection.detector';
export {
  BUILT_IN_RULES,
  DEFAULT_POLICY_BY_CATEGORY,
  GUARDRAIL_POLICIES,
  isBuiltInRule,
  isGuardrailPolicy,
  resolvePolicies,
  type ActivePolicy,
  type GuardrailPolicies,
  type GuardrailPolicy,
} from './guardrail-policy';
export {
  GuardrailBlockedError,
  createGuardrails,
  type Guardrails,
  type GuardrailsOptions,
  type InputInspector,
} from './guardrail-engine';
export { GuardrailEngineCache, type PolicyLoader } from './guardrail-cache';
export type { OutputFilter } from './output-filter';
export { redactionMarker } from './text-scanner';

/**
 * The built-in detectors, in the order overlapping matches are labelled
 * (an 18-digit ID that also passes Luhn is redacted as `cn-id-card`).
 */
export function defaultDetectors(blockList: readonly string[]): Detector[] {
  return [
    cnIdCardDetector,
    cnMobileDetector,
    bankCardDetector,
    emailDetector,
    apiSecretDetector,
    promptInjectionDetector,
    createBlockListDetector(blockList),
  ];
}
