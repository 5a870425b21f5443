// Written by scripts/embed.mjs from the files named below: do not edit; edit those and build.
// The version in package.json.
export const VERSION = "0.1.0";
