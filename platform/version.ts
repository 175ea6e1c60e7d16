/** agentd's version; the release workflow checks it against the git tag. */
export const VERSION = "0.1.0";
