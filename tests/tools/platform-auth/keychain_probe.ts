// Run inside a D-Bus session with a Secret Service (see keychain_test.ts):
// opens the master key twice through the keychain and reports what it saw.

import { join } from "node:path";
import { decrypt, encrypt, openSecrets } from "../../../platform/secrets.ts";

const dataDir = Deno.args[0];
const env = Deno.env.toObject();
delete env.AGENTD_SECRET_KEY;
const first = await openSecrets({ env, dataDir, keychain: true });
const sealed = await encrypt(
  first.dataKey,
  "sealed with the keychain key",
  "probe",
);
const second = await openSecrets({ env, dataDir, keychain: true });
const keyFile = await Deno.stat(join(dataDir, "secret.key")).then(
  () => true,
  () => false,
);
console.log(JSON.stringify({
  first: first.source,
  second: second.source,
  opened: await decrypt(second.dataKey, sealed, "probe"),
  keyFile,
}));
