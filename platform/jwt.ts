// The one import seam for jose (JWT verification against an issuer's JWKS).

export { createRemoteJWKSet, decodeJwt, errors, jwtVerify } from "jose";
export type { JWTPayload } from "jose";
