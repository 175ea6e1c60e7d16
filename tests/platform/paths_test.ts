import assert from "node:assert/strict";
import { configDir, dataDir, type OsEnv } from "../../platform/paths.ts";

function osEnv(
  os: OsEnv["os"],
  vars: Record<string, string>,
  home?: string,
): OsEnv {
  return { os, env: (name) => vars[name], home };
}

Deno.test("paths: linux uses XDG variables when set", () => {
  const env = osEnv("linux", {
    HOME: "/home/u",
    XDG_DATA_HOME: "/xdg/data",
    XDG_CONFIG_HOME: "/xdg/config",
  });
  assert.equal(dataDir(env), "/xdg/data/agentd");
  assert.equal(configDir(env), "/xdg/config/agentd");
});

Deno.test("paths: linux falls back to HOME; empty or relative XDG values are ignored", () => {
  const env = osEnv("linux", {
    HOME: "/home/u",
    XDG_DATA_HOME: "",
    XDG_CONFIG_HOME: "relative/dir",
  });
  assert.equal(dataDir(env), "/home/u/.local/share/agentd");
  assert.equal(configDir(env), "/home/u/.config/agentd");
});

Deno.test("paths: injected home overrides HOME", () => {
  const env = osEnv("freebsd", { HOME: "/home/u" }, "/other");
  assert.equal(dataDir(env), "/other/.local/share/agentd");
});

Deno.test("paths: darwin uses Application Support for both", () => {
  const env = osEnv("darwin", { HOME: "/Users/u", XDG_DATA_HOME: "/ignored" });
  assert.equal(dataDir(env), "/Users/u/Library/Application Support/agentd");
  assert.equal(configDir(env), "/Users/u/Library/Application Support/agentd");
});

Deno.test("paths: windows uses APPDATA", () => {
  const env = osEnv("windows", { APPDATA: "C:\\Users\\u\\AppData\\Roaming" });
  assert.equal(dataDir(env), "C:\\Users\\u\\AppData\\Roaming\\agentd");
  assert.equal(configDir(env), "C:\\Users\\u\\AppData\\Roaming\\agentd");
});

Deno.test("paths: missing HOME / APPDATA names the variable to set", () => {
  assert.throws(() => dataDir(osEnv("linux", {})), /HOME is not set.*set HOME/);
  assert.throws(
    () => configDir(osEnv("darwin", { HOME: "" })),
    /HOME is not set/,
  );
  assert.throws(
    () => dataDir(osEnv("windows", { HOME: "/x" })),
    /APPDATA is not set/,
  );
  // XDG alone is enough on linux, HOME is not needed then.
  assert.equal(dataDir(osEnv("linux", { XDG_DATA_HOME: "/d" })), "/d/agentd");
});

Deno.test({
  name: "paths: default OsEnv reads the real environment",
  ignore: Deno.build.os !== "windows" && !Deno.env.get("HOME"),
  fn() {
    assert.ok(dataDir().endsWith("agentd"));
    assert.ok(configDir().endsWith("agentd"));
  },
});
