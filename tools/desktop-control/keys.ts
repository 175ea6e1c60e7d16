// Key names as agents write them: one chord string ("ctrl+shift+T") or
// separate names, split into the names the backends press.

const MODIFIERS = new Set([
  "ctrl",
  "control",
  "shift",
  "alt",
  "option",
  "altgr",
  "super",
  "win",
  "windows",
  "cmd",
  "command",
  "meta",
]);

/** `["ctrl+shift+T"]` or `["ctrl", "shift", "t"]` → key names; `+` alone is the plus key. */
export function splitKeys(keys: readonly string[]): string[] {
  const names = keys.flatMap((key) =>
    key.length > 1 ? key.split(/\+(?=.)/).map((part) => part.trim()) : [key]
  );
  const chord = names.some((name) => MODIFIERS.has(name.toLowerCase()));
  // In a chord, "T" means the T key: shift must be asked for by name.
  return names.map((name) =>
    chord && /^[A-Z]$/.test(name) ? name.toLowerCase() : name
  );
}
