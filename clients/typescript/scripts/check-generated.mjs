// Fails when src/generated/openapi.ts is not what openapi-typescript generates from
// docs/openapi.json today (run `npm run generate` and commit the result).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = mkdtempSync(join(tmpdir(), "openrail-ts-gen-"));
try {
  const out = join(dir, "openapi.ts");
  execFileSync(join(root, "node_modules/.bin/openapi-typescript"), ["../../docs/openapi.json", "-o", out], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const committed = readFileSync(join(root, "src/generated/openapi.ts"), "utf8");
  if (readFileSync(out, "utf8") !== committed) {
    console.error("src/generated/openapi.ts is stale: run `npm run generate` in clients/typescript and commit it");
    process.exit(1);
  }
  console.log("src/generated/openapi.ts is up to date with docs/openapi.json");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
