// The secret key file: servers and processes that start at once share one key.

import assert from "node:assert/strict";
import { join } from "node:path";
import { decrypt, encrypt, openSecrets } from "../../platform/secrets.ts";

Deno.test("secrets: servers opening a new key file at once all get the same whole key", async () => {
  for (let round = 0; round < 20; round++) {
    const dataDir = await Deno.makeTempDir({ prefix: "agentd-secrets-" });
    try {
      const opened = await Promise.all(
        Array.from({ length: 16 }, () => openSecrets({ env: {}, dataDir })),
      );
      const sealed = await encrypt(opened[0].dataKey, "the value", "ctx");
      for (const secrets of opened) {
        assert.equal(
          await decrypt(secrets.dataKey, sealed, "ctx"),
          "the value",
        );
      }
      const files = [...Deno.readDirSync(dataDir)].map((entry) => entry.name);
      assert.deepEqual(files, ["secret.key"], "no temp file left behind");
      const mode = (await Deno.stat(join(dataDir, "secret.key"))).mode ?? 0;
      if (Deno.build.os !== "windows") assert.equal(mode & 0o777, 0o600);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  }
});
