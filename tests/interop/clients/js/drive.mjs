// Drive the adapter with the official @a2a-js/sdk client; print one JSON result.
//
// Runs from a copy in the client cache, beside the node_modules that `npm ci` made from
// package-lock.json here (tests/interop/matrix.py). Usage:
//
//   node drive.mjs BASE_URL TOKEN MODE conversation TEXT...
//   node drive.mjs BASE_URL TOKEN MODE cancel ANSWER_TEXT HOLD_TEXT
//   node drive.mjs BASE_URL TOKEN MODE isolation OTHER_TOKEN REFRESHED_TOKEN ANSWER_TEXT HOLD_TEXT
//
// MODE: "v1.0" (the SDK's defaults), "legacyCompat" (legacyCompat on the transport
// factory and the card resolver), "legacyCompat-v0.3" (the same, with the card cut to
// its v0.3 interface, so the SDK's v0.3 transport is the one that talks).
// The result's shape is the same for every client driver (see tests/interop/matrix.py).

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";

// The SDK's enums are protobuf numbers; the drivers report v0.3 names.
const STATES = [
  "unspecified", "submitted", "working", "completed", "failed",
  "canceled", "input-required", "rejected", "auth-required",
];
const ROLES = ["unspecified", "user", "agent"];
const ROLE_USER = 1;

const texts = (parts) =>
  (parts ?? []).filter((p) => p.content?.$case === "text").map((p) => p.content.value);

function task(t) {
  const message = t.status?.message;
  return {
    id: t.id,
    contextId: t.contextId,
    state: STATES[t.status?.state] ?? String(t.status?.state),
    statusRole: message ? ROLES[message.role] ?? String(message.role) : null,
    statusText: message ? texts(message.parts).join("\n") : null,
    artifacts: (t.artifacts ?? []).map((a) => ({ name: a.name, texts: texts(a.parts) })),
    historyRoles: (t.history ?? []).map((m) => ROLES[m.role] ?? String(m.role)),
    outcome: t.metadata?.outcome ?? null,
  };
}

function error(e) {
  // JSON-RPC errors arrive as the SDK's typed errors (TaskNotFoundError, ...).
  return { type: e?.name ?? typeof e, code: e?.envelopeCode ?? null, message: String(e?.message ?? e) };
}

async function outcome(call) {
  try {
    return { task: task(await call) };
  } catch (e) {
    return { error: error(e) };
  }
}

async function send(client, text, { blocking = true } = {}) {
  const result = await client.sendMessage({
    message: {
      messageId: randomUUID(),
      role: ROLE_USER,
      parts: [{ content: { $case: "text", value: text } }],
    },
    configuration: { returnImmediately: !blocking },
  });
  // A Task has `status`; a Message (which this agent never sends) does not.
  if (!result?.status) throw new Error(`expected a task, got ${JSON.stringify(result)}`);
  return result;
}

async function conversation(client, all) {
  const sent = {};
  for (const text of all) sent[text] = await outcome(send(client, text));
  const first = sent[all[0]].task?.id ?? "";
  return {
    sent,
    get: await outcome(client.getTask({ id: first, historyLength: 1 })),
    getUnknown: await outcome(client.getTask({ id: randomUUID() })),
  };
}

async function cancel(client, answerText, holdText) {
  const terminal = await send(client, answerText);
  const held = await send(client, holdText, { blocking: false });
  return {
    held: task(held),
    cancel: await outcome(client.cancelTask({ id: held.id })),
    getAfterCancel: await outcome(client.getTask({ id: held.id })),
    cancelTerminal: await outcome(client.cancelTask({ id: terminal.id })),
    cancelUnknown: await outcome(client.cancelTask({ id: randomUUID() })),
  };
}

async function ids(call) {
  try {
    return { ids: (await call).tasks.map((t) => t.id) };
  } catch (e) {
    return { error: error(e) };
  }
}

async function subscribed(client, id) {
  try {
    const states = [];
    for await (const event of client.resubscribeTask({ id })) states.push(String(event?.status?.state));
    return { states };
  } catch (e) {
    return { error: error(e) };
  }
}

// Another caller's attempts on the first caller's tasks, and on an unknown id, then the
// first caller again with a refreshed token.
async function isolation(client, makeClient, otherToken, refreshedToken, answerText, holdText) {
  const sent = await send(client, answerText);
  const held = await send(client, holdText, { blocking: false });
  const other = await makeClient(otherToken);
  const unknown = randomUUID();
  const attempts = {};
  for (const [name, id] of [["sent", sent.id], ["held", held.id], ["unknown", unknown]]) {
    attempts[name] = {
      get: await outcome(other.getTask({ id })),
      cancel: await outcome(other.cancelTask({ id })),
      subscribe: await subscribed(other, id),
    };
  }
  const refreshed = await makeClient(refreshedToken);
  return {
    sent: task(sent),
    held: task(held),
    unknown,
    other: attempts,
    // status 0 (unspecified) spelled out: the SDK writes an absent enum as "UNRECOGNIZED".
    otherList: await ids(other.listTasks({ status: 0 })),
    ownList: await ids(refreshed.listTasks({ status: 0 })),
    refreshedGet: await outcome(refreshed.getTask({ id: held.id })),
    refreshedCancel: await outcome(refreshed.cancelTask({ id: held.id })),
  };
}

async function main() {
  const [baseUrl, token, mode, scenario, ...args] = process.argv.slice(2);
  const legacy = mode.startsWith("legacyCompat") ? { legacyCompat: { enabled: true } } : {};
  const makeClient = async (bearer) => {
    const fetchImpl = (input, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set("Authorization", `Bearer ${bearer}`);
      return fetch(input, { ...init, headers });
    };
    const resolver = new DefaultAgentCardResolver({ fetchImpl, ...legacy });
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl, ...legacy })],
      cardResolver: resolver,
    });
    const card = await resolver.resolve(baseUrl);
    if (mode === "legacyCompat-v0.3") {
      card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === "0.3");
    }
    return factory.createFromAgentCard(card);
  };
  const client = await makeClient(token);
  const scenarios = {
    conversation: () => conversation(client, args),
    cancel: () => cancel(client, ...args),
    isolation: () => isolation(client, makeClient, ...args),
  };
  // The SDK exports no ./package.json: read the installed one beside this copy.
  const sdk = new URL("./node_modules/@a2a-js/sdk/package.json", import.meta.url);
  const result = {
    client: "@a2a-js/sdk",
    version: JSON.parse(readFileSync(sdk, "utf8")).version,
    runtime: `Node ${process.version}`,
    transport: client.transport.constructor.name,
    protocolVersion: client.protocolVersion,
    ...(await scenarios[scenario]()),
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

await main();
