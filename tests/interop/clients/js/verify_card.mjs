// Verify the adapter's signed Agent Card with the official @a2a-js/sdk; print one JSON result.
//
// Runs from a copy in the client cache, beside the node_modules that `npm ci` made from
// package-lock.json here (tests/interop/test_card_signature.py). Usage:
//
//   node verify_card.mjs BASE_URL PUBLIC_KEY_PEM_FILE
//
// Verifies with the SDK's verifyAgentCardSignature and the public key: the v1.0 card as
// fetched (A2A-Version: 1.0, as the SDK's resolver asks), the legacy card as fetched (no
// A2A-Version), and the card the SDK's client holds (client.getAgentCard with the
// verifier). Each: {verified: true} or {verified: false, error}; and the (kid, jku) each
// signature's header named to the key lookup.

import { createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";

import { AGENT_CARD_PATH, verifyAgentCardSignature } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";

async function attempt(verify) {
  try {
    await verify();
    return { verified: true };
  } catch (e) {
    return { verified: false, error: String(e?.message ?? e) };
  }
}

async function main() {
  const [baseUrl, keyFile] = process.argv.slice(2);
  const key = createPublicKey(readFileSync(keyFile));
  const named = [];
  const verifier = verifyAgentCardSignature(async (kid, jku) => {
    named.push({ kid, jku: jku ?? null });
    return key;
  });
  // The verifier tells of each signature it refuses on console.debug, which is stdout.
  console.debug = () => {};
  const fetched = async (headers) =>
    (await fetch(new URL(AGENT_CARD_PATH, baseUrl), { headers })).json();
  const client = await new ClientFactory().createFromUrl(baseUrl);
  // The SDK exports no ./package.json: read the installed one beside this copy.
  const sdk = new URL("./node_modules/@a2a-js/sdk/package.json", import.meta.url);
  const result = {
    client: "@a2a-js/sdk",
    version: JSON.parse(readFileSync(sdk, "utf8")).version,
    runtime: `Node ${process.version}`,
    v1: await attempt(async () => verifier(await fetched({ "A2A-Version": "1.0" }))),
    legacy: await attempt(async () => verifier(await fetched({}))),
    held: await attempt(() => client.getAgentCard(undefined, verifier)),
    named,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

await main();
