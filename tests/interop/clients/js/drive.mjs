// Drive the adapter with the official @a2a-js/sdk client; print one JSON result.
//
// Runs from a copy in the client cache, beside the node_modules that `npm ci` made from
// package-lock.json here (tests/interop/matrix.py). Usage:
//
//   node drive.mjs BASE_URL TOKEN MODE conversation TEXT...
//   node drive.mjs BASE_URL TOKEN MODE cancel ANSWER_TEXT HOLD_TEXT
//   node drive.mjs BASE_URL TOKEN MODE push TEXT PUSH_TOKEN OK_URL FLAKY_URL DEAD_URL REFUSED_URL...
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

async function send(client, text, { blocking = true, push = undefined } = {}) {
  const configuration = { returnImmediately: !blocking };
  if (push) configuration.taskPushNotificationConfig = push;
  const result = await client.sendMessage({
    message: {
      messageId: randomUUID(),
      role: ROLE_USER,
      parts: [{ content: { $case: "text", value: text } }],
    },
    configuration,
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

const config = (c) => ({ taskId: c.taskId, id: c.id, url: c.url, token: c.token });

async function configOutcome(call) {
  try {
    return { config: config(await call) };
  } catch (e) {
    return { error: error(e) };
  }
}

// Inline configs on sends (a receiver that answers, one that answers 503 twice first, one
// that never answers), then the four config methods on the first task, then configs the
// adapter must refuse.
async function push(client, text, token, okUrl, flakyUrl, deadUrl, ...refusedUrls) {
  const sent = await outcome(send(client, text, { push: { url: okUrl, token } }));
  const flaky = await outcome(send(client, text, { push: { url: flakyUrl, token } }));
  const started = Date.now();
  const dead = await outcome(send(client, text, { push: { url: deadUrl, token } }));
  const deadMs = Date.now() - started;
  const taskId = sent.task?.id ?? "";
  const created = await configOutcome(
    client.createTaskPushNotificationConfig({ taskId, id: "bridge", url: okUrl, token })
  );
  const got = await configOutcome(client.getTaskPushNotificationConfig({ taskId, id: "bridge" }));
  const listed = (await client.listTaskPushNotificationConfig({ taskId })).configs.map(config);
  await client.deleteTaskPushNotificationConfig({ taskId, id: "bridge" });
  await client.deleteTaskPushNotificationConfig({ taskId, id: "bridge" });
  const afterDelete = await configOutcome(client.getTaskPushNotificationConfig({ taskId, id: "bridge" }));
  const refused = {};
  for (const url of refusedUrls) {
    refused[url] = await configOutcome(client.createTaskPushNotificationConfig({ taskId, url }));
  }
  return { sent, flaky, dead, deadMs, created, got, listed, afterDelete, refused };
}

const SCENARIOS = {
  conversation: (client, args) => conversation(client, args),
  cancel: (client, args) => cancel(client, ...args),
  push: (client, args) => push(client, ...args),
};

async function main() {
  const [baseUrl, token, mode, scenario, ...args] = process.argv.slice(2);
  const fetchImpl = (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const legacy = mode.startsWith("legacyCompat") ? { legacyCompat: { enabled: true } } : {};
  const resolver = new DefaultAgentCardResolver({ fetchImpl, ...legacy });
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, ...legacy })],
    cardResolver: resolver,
  });
  const card = await resolver.resolve(baseUrl);
  if (mode === "legacyCompat-v0.3") {
    card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === "0.3");
  }
  const client = await factory.createFromAgentCard(card);
  // The SDK exports no ./package.json: read the installed one beside this copy.
  const sdk = new URL("./node_modules/@a2a-js/sdk/package.json", import.meta.url);
  const result = {
    client: "@a2a-js/sdk",
    version: JSON.parse(readFileSync(sdk, "utf8")).version,
    runtime: `Node ${process.version}`,
    transport: client.transport.constructor.name,
    protocolVersion: client.protocolVersion,
    ...(await SCENARIOS[scenario](client, args)),
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

await main();
