// The server the end-to-end tests talk to: `scripts/test-against-dev.sh` starts a fresh
// `openrail dev` and exports these. Without them the end-to-end tests are skipped
// visibly, unless OPENRAIL_REQUIRE_SERVER is set (as the script does), when they fail.
import type { Address, Hex } from "viem";

export const env = {
  url: process.env["OPENRAIL_API_URL"],
  key: process.env["OPENRAIL_API_KEY"],
  payerKey: process.env["OPENRAIL_PAYER_KEY"] as Hex | undefined,
  payer: process.env["OPENRAIL_PAYER"] as Address | undefined,
};
const present = Boolean(env.url && env.key && env.payerKey && env.payer);
if (!present && process.env["OPENRAIL_REQUIRE_SERVER"]) throw new Error("OPENRAIL_API_URL, OPENRAIL_API_KEY, OPENRAIL_PAYER_KEY, OPENRAIL_PAYER must be set");
/** `skip` option of the end-to-end tests. */
export const skipWithoutServer: string | false = present ? false : "no openrail dev (run scripts/test-against-dev.sh)";

export function server(): { url: string; key: string; payerKey: Hex; payer: Address } {
  return { url: env.url!, key: env.key!, payerKey: env.payerKey!, payer: env.payer! };
}
