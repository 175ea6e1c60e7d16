// Defaults shared by the memory server's config section (config.ts) and its
// service, apart from both: `agentd serve` reads the config at start and
// loads the service only when memory is first used.

export const DEFAULT_SENSITIVE_TAG = "sensitive";
