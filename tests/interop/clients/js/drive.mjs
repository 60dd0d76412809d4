// Drive the adapter with the official @a2a-js/sdk client; print one JSON result.
//
// Runs from a copy in the client cache, beside the node_modules that `npm ci` made from
// package-lock.json here (tests/interop/matrix.py). Usage:
//
//   node drive.mjs BASE_URL TOKEN MODE conversation TEXT...
//   node drive.mjs BASE_URL TOKEN MODE cancel ANSWER_TEXT HOLD_TEXT
//   node drive.mjs BASE_URL TOKEN MODE stream TEXT...
//   node drive.mjs BASE_URL TOKEN MODE subscribe HOLD_TEXT
//   node drive.mjs BASE_URL TOKEN MODE isolation OTHER_TOKEN REFRESHED_TOKEN ANSWER_TEXT HOLD_TEXT
//   node drive.mjs BASE_URL TOKEN MODE push TEXT PUSH_TOKEN OK_URL FLAKY_URL DEAD_URL REFUSED_URL...
//   node drive.mjs BASE_URL TOKEN MODE parts SENT_JSON
//   node drive.mjs BASE_URL TOKEN MODE payloads CASES_JSON   (payloads.mjs)
//
// MODE: "v1.0" (the SDK's defaults), "legacyCompat" (legacyCompat on the transport
// factory and the card resolver), "legacyCompat-v0.3" (the same, with the card cut to
// its v0.3 interface, so the SDK's v0.3 transport is the one that talks), "v1.0 REST"
// (the SDK's HTTP+JSON transport alone, so that it picks the card's HTTP+JSON interface).
// `conversation` and `cancel` use sendMessage, `stream` sendMessageStream and
// `subscribe` resubscribeTask, which stream because the card says it can. `parts` sends
// with sendMessage and with sendMessageStream a text part, a data part per `data` value
// and a file part per `files` entry of SENT_JSON (in the shapes the workflow receives),
// and reports each artifact's parts in those shapes.
// The result's shape is the same for every client driver (see tests/interop/matrix.py).

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { toJsonRpcError } from "@a2a-js/sdk/errors";

import { payloads } from "./payloads.mjs";

// The SDK's enums are protobuf numbers; the drivers report v0.3 names.
const STATES = [
  "unspecified", "submitted", "working", "completed", "failed",
  "canceled", "input-required", "rejected", "auth-required",
];
const ROLES = ["unspecified", "user", "agent"];
const ROLE_USER = 1;

const texts = (parts) =>
  (parts ?? []).filter((p) => p.content?.$case === "text").map((p) => p.content.value);

function status(s) {
  const message = s?.message;
  return {
    state: STATES[s?.state] ?? String(s?.state),
    statusRole: message ? ROLES[message.role] ?? String(message.role) : null,
    statusText: message ? texts(message.parts).join("\n") : null,
  };
}

const artifact = (a) => ({ name: a.name, texts: texts(a.parts) });

function task(t) {
  return {
    id: t.id,
    contextId: t.contextId,
    ...status(t.status),
    artifacts: (t.artifacts ?? []).map(artifact),
    historyRoles: (t.history ?? []).map((m) => ROLES[m.role] ?? String(m.role)),
    outcome: t.metadata?.outcome ?? null,
  };
}

function error(e) {
  // A JSON-RPC error answer arrives as the SDK's typed error (TaskNotFoundError, ...); one
  // in an SSE event as a plain Error whose `cause` is that typed error. An HTTP+JSON error
  // carries no JSON-RPC code: the SDK types it by its ErrorInfo reason, and maps that type
  // to its code (toJsonRpcError), as the Python driver does with its own table.
  const type = e?.cause ? `${e.name} caused by ${e.cause.name}` : e?.name ?? typeof e;
  const rest = e?.transport === "rest" ? toJsonRpcError(e).code : null;
  const code = e?.envelopeCode ?? e?.cause?.envelopeCode ?? rest;
  return { type, code, message: String(e?.message ?? e) };
}

async function outcome(call) {
  try {
    return { task: task(await call) };
  } catch (e) {
    return { error: error(e) };
  }
}

// One stream event in the drivers' common shape (kinds as v0.3 names them).
function event(e) {
  const { $case: kind, value } = e?.payload ?? {};
  const empty = { state: null, final: null, statusRole: null, statusText: null, outcome: null };
  switch (kind) {
    case "task":
      return {
        kind: "task",
        taskId: value.id,
        ...empty,
        ...status(value.status),
        outcome: value.metadata?.outcome ?? null,
      };
    case "statusUpdate":
      return {
        kind: "status-update",
        taskId: value.taskId,
        ...status(value.status),
        // v1.0 has no `final`; report it only if the SDK kept one.
        final: value.final ?? null,
        outcome: value.status?.message?.metadata?.outcome ?? null,
      };
    case "artifactUpdate":
      return {
        kind: "artifact-update",
        taskId: value.taskId,
        ...empty,
        artifact: artifact(value.artifact),
      };
    case "message":
      return { kind: "message", taskId: value.taskId ?? null, ...empty };
    default:
      throw new Error(`unexpected stream event ${JSON.stringify(e)}`);
  }
}

// Every event of a stream, and the error it ended in, if one.
async function stream(events, afterFirst) {
  const seen = [];
  try {
    for await (const e of events) {
      seen.push(event(e));
      if (afterFirst && seen.length === 1) await afterFirst();
    }
  } catch (e) {
    return { events: seen, error: error(e) };
  }
  return { events: seen };
}

const messageOf = (parts) => ({ messageId: randomUUID(), role: ROLE_USER, parts });
const message = (text) => messageOf([{ content: { $case: "text", value: text } }]);

async function send(client, text, options) {
  return sendMessage(client, message(text), options);
}

async function sendMessage(client, sent, { blocking = true, push = undefined } = {}) {
  const configuration = { returnImmediately: !blocking };
  if (push) configuration.taskPushNotificationConfig = push;
  const result = await client.sendMessage({ message: sent, configuration });
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

async function cancel(client, [answerText, holdText]) {
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

async function streamed(client, all) {
  const result = {};
  for (const text of all) {
    result[text] = await stream(client.sendMessageStream({ message: message(text) }));
  }
  return { streamed: result };
}

async function subscribe(client, [holdText]) {
  const held = await send(client, holdText, { blocking: false });
  const cancelIt = () => client.cancelTask({ id: held.id });
  return {
    held: task(held),
    subscribed: await stream(client.resubscribeTask({ id: held.id }), cancelIt),
    subscribeFinished: await stream(client.resubscribeTask({ id: held.id })),
    subscribeUnknown: await stream(client.resubscribeTask({ id: randomUUID() })),
  };
}

async function ids(call) {
  try {
    return { ids: (await call).tasks.map((t) => t.id) };
  } catch (e) {
    return { error: error(e) };
  }
}

// Another caller's attempts on the first caller's tasks, and on an unknown id, then the
// first caller again with a refreshed token.
async function isolation(client, [otherToken, refreshedToken, answerText, holdText], makeClient) {
  const sent = await send(client, answerText);
  const held = await send(client, holdText, { blocking: false });
  const other = await makeClient(otherToken);
  const unknown = randomUUID();
  const attempts = {};
  for (const [name, id] of [["sent", sent.id], ["held", held.id], ["unknown", unknown]]) {
    attempts[name] = {
      get: await outcome(other.getTask({ id })),
      cancel: await outcome(other.cancelTask({ id })),
      subscribe: await stream(other.resubscribeTask({ id })),
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
async function push(client, [text, token, okUrl, flakyUrl, deadUrl, ...refusedUrls]) {
  const sent = await outcome(send(client, text, { push: { url: okUrl, token } }));
  const flaky = await outcome(send(client, text, { push: { url: flakyUrl, token } }));
  const started = Date.now();
  const dead = await outcome(send(client, text, { push: { url: deadUrl, token } }));
  const deadMs = Date.now() - started;
  const taskId = sent.task?.id ?? "";
  const named = { taskId, id: "bridge" };
  const created = await configOutcome(
    client.createTaskPushNotificationConfig({ ...named, url: okUrl, token })
  );
  const got = await configOutcome(client.getTaskPushNotificationConfig(named));
  const listed = (await client.listTaskPushNotificationConfig({ taskId })).configs.map(config);
  await client.deleteTaskPushNotificationConfig(named);
  await client.deleteTaskPushNotificationConfig(named);
  const afterDelete = await configOutcome(client.getTaskPushNotificationConfig(named));
  const refused = {};
  for (const url of refusedUrls) {
    refused[url] = await configOutcome(client.createTaskPushNotificationConfig({ taskId, url }));
  }
  return { sent, flaky, dead, deadMs, created, got, listed, afterDelete, refused };
}

// SENT_JSON's text, each data value and each file as the SDK's parts.
function partsOf(sent) {
  const part = (content, filename = "", mediaType = "") => ({ content, filename, mediaType });
  const file = (f) =>
    "base64" in f
      ? { $case: "raw", value: Buffer.from(f.base64, "base64") }
      : { $case: "url", value: f.url };
  return [
    part({ $case: "text", value: sent.text }),
    ...sent.data.map((value) => part({ $case: "data", value })),
    ...sent.files.map((f) => part(file(f), f.name, f.mediaType)),
  ];
}

// A part the SDK read, back in SENT_JSON's shapes.
function shape(p) {
  const { $case: kind, value } = p.content ?? {};
  if (kind === "text") return { text: value };
  if (kind === "data") return { data: value };
  const named = { name: p.filename, mediaType: p.mediaType };
  if (kind === "raw") return { ...named, base64: Buffer.from(value).toString("base64") };
  return { ...named, url: value };
}

const partsArtifact = (a) => ({ name: a.name, parts: a.parts.map(shape) });

// SENT_JSON sent (sendMessage) and streamed (sendMessageStream): every artifact's parts,
// or the error each ended in.
async function parts(client, [sentJson]) {
  const toSend = () => messageOf(partsOf(JSON.parse(sentJson)));
  let sent;
  try {
    const t = await sendMessage(client, toSend());
    sent = { task: { ...task(t), artifacts: (t.artifacts ?? []).map(partsArtifact) } };
  } catch (e) {
    sent = { error: error(e) };
  }
  const artifacts = [];
  let state = null;
  try {
    for await (const e of client.sendMessageStream({ message: toSend() })) {
      const { $case: kind, value } = e?.payload ?? {};
      if (kind === "artifactUpdate") artifacts.push(partsArtifact(value.artifact));
      if (kind === "statusUpdate") state = STATES[value.status?.state] ?? null;
    }
  } catch (e) {
    return { sent, streamed: { error: error(e) } };
  }
  return { sent, streamed: { artifacts, state } };
}

// The same message (one messageId) sent twice, blocking then streamed: one workflow run,
// both answered by the first sending's task.
async function retry(client, [text]) {
  const once = message(text);
  const first = await outcome(sendMessage(client, once));
  const again = await outcome(sendMessage(client, once));
  const streamedAgain = await stream(client.sendMessageStream({ message: once }));
  return { first, again, streamedAgain };
}

// A workflow that asks the caller to sign in (auth-required), then the caller's next
// message on that task, sent and then streamed: each its next turn.
async function signin(client, [prompt, reply]) {
  const asked = await outcome(send(client, prompt));
  const onTask = (text) => ({ ...message(text), taskId: asked.task?.id ?? "" });
  const replied = await outcome(sendMessage(client, onTask(reply)));
  const askedAgain = await outcome(send(client, prompt));
  const again = { ...message(reply), taskId: askedAgain.task?.id ?? "" };
  const streamedReply = await stream(client.sendMessageStream({ message: again }));
  return { asked, replied, askedAgain, streamedReply };
}

const SCENARIOS = {
  conversation, cancel, stream: streamed, subscribe, isolation, push, parts, payloads, retry,
  signin,
};

async function main() {
  const [baseUrl, token, mode, scenario, ...args] = process.argv.slice(2);
  const legacy = mode.startsWith("legacyCompat") ? { legacyCompat: { enabled: true } } : {};
  const makeClient = async (bearer) => {
    const fetchImpl = (input, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set("Authorization", `Bearer ${bearer}`);
      // A caller asking for another A2A version than the SDK's own (the 1.1 draft).
      if (process.env.A2A_ASK_VERSION) headers.set("A2A-Version", process.env.A2A_ASK_VERSION);
      return fetch(input, { ...init, headers });
    };
    const resolver = new DefaultAgentCardResolver({ fetchImpl, ...legacy });
    const transport =
      mode === "v1.0 REST"
        ? new RestTransportFactory({ fetchImpl })
        : new JsonRpcTransportFactory({ fetchImpl, ...legacy });
    const factory = new ClientFactory({ transports: [transport], cardResolver: resolver });
    const card = await resolver.resolve(baseUrl);
    if (mode === "legacyCompat-v0.3") {
      card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === "0.3");
    }
    return factory.createFromAgentCard(card);
  };
  const client = await makeClient(token);
  // The SDK exports no ./package.json: read the installed one beside this copy.
  const sdk = new URL("./node_modules/@a2a-js/sdk/package.json", import.meta.url);
  const result = {
    client: "@a2a-js/sdk",
    version: JSON.parse(readFileSync(sdk, "utf8")).version,
    runtime: `Node ${process.version}`,
    transport: client.transport.constructor.name,
    protocolVersion: client.protocolVersion,
    ...(await SCENARIOS[scenario](client, args, makeClient)),
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

await main();
