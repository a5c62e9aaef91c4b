/**
 * Proof-of-work challenges (ALTCHA format): issue with a publishable key, verify and spend with a
 * secret key. Pure parts in pow.ts, the service in service.ts, store adaptors in store.ts.
 */
export {
  CHALLENGE_ALGORITHM,
  DEFAULT_DIFFICULTY,
  MAX_TOKEN_LENGTH,
  checkChallengeToken,
  decodeChallengeToken,
  issueChallenge,
  challengeSecrets,
  type ChallengeDifficulty,
  type ChallengeReason,
  type ChallengeSecrets,
  type IssuedChallenge,
  type TokenCheck,
} from "./pow.js";
export {
  createChallengeService,
  verifyChallengeToken,
  type ChallengeService,
  type ChallengeServiceOptions,
  type ChallengeVerdict,
  type SpendChallenge,
} from "./service.js";
export { CHALLENGE_SECRET_KEY, ensureChallengeSecret, storeSpender } from "./store.js";
