// The `payloads` scenario of drive.mjs: real payloads by every path a client reads a task,
// each reported by its digests (tests/interop/payloads.py says the cases and the shape).
//
//   node drive.mjs BASE_URL TOKEN MODE payloads CASES_JSON
//
// CASES_JSON: a list of {id, path, text, upload?: {file, name, mediaType}, push?: {url,
// token}}; path one of blocking, poll, list, stream, subscribe, push. An upload's bytes
// are read from its file.

import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

const STATES = [
  "unspecified", "submitted", "working", "completed", "failed",
  "canceled", "input-required", "rejected", "auth-required",
];
const ROLES = ["unspecified", "user", "agent"];
const TERMINAL = ["completed", "failed", "canceled", "rejected"];
const SHORT_TEXT = 4096;

const digest = (bytes) => ({
  sha256: createHash("sha256").update(bytes).digest("hex"),
  size: bytes.length,
});

// A part as the SDK read it, in the drivers' shape.
function shape(p) {
  const { $case: kind, value } = p.content ?? {};
  if (kind === "text") {
    const encoded = Buffer.from(value, "utf8");
    const short = encoded.length <= SHORT_TEXT ? { text: value } : {};
    return { kind: "text", ...digest(encoded), metadata: p.metadata ?? null, ...short };
  }
  if (kind === "raw") {
    return { kind: "file", name: p.filename, mediaType: p.mediaType, ...digest(value) };
  }
  return { kind: String(kind), sha256: "", size: 0 };
}

const artifact = (a) => ({ artifactId: a.artifactId, name: a.name, parts: a.parts.map(shape) });
const state = (s) => STATES[s?.state] ?? String(s?.state);

const task = (t) => ({
  state: state(t.status),
  artifacts: (t.artifacts ?? []).map(artifact),
  history: (t.history ?? []).map((m) => ({
    role: ROLES[m.role] ?? String(m.role),
    parts: m.parts.map(shape),
  })),
});

// Artifact updates put together as a reader does: by artifactId, `append` adds parts.
function joined(updates) {
  const byId = new Map();
  for (const { artifact: a, append } of updates) {
    const earlier = byId.get(a.artifactId);
    byId.set(a.artifactId, append && earlier ? { ...earlier, parts: [...earlier.parts, ...a.parts] } : a);
  }
  return [...byId.values()];
}

async function streamed(events) {
  let first = null;
  const updates = [];
  let read = { state: null, artifacts: [], history: [] };
  for await (const e of events) {
    const { $case: kind, value } = e?.payload ?? {};
    if (kind === "task") read = task(value);
    else if (kind === "artifactUpdate") {
      updates.push({ artifact: artifact(value.artifact), append: value.append });
    } else if (kind === "statusUpdate") read.state = state(value.status);
    if (first === null) first = { kind, state: read.state, artifacts: read.artifacts.length };
  }
  return { ...read, artifacts: joined(updates), first };
}

function message(c) {
  const parts = [{ content: { $case: "text", value: c.text } }];
  if (c.upload) {
    const value = readFileSync(c.upload.file);
    parts.push({ content: { $case: "raw", value }, filename: c.upload.name, mediaType: c.upload.mediaType });
  }
  return { messageId: randomUUID(), role: 1, parts };
}

async function sent(client, c, blocking = true) {
  const configuration = { returnImmediately: !blocking };
  if (c.push) configuration.taskPushNotificationConfig = c.push;
  const result = await client.sendMessage({ message: message(c), configuration });
  if (!result?.status) throw new Error(`expected a task, got ${JSON.stringify(result).slice(0, 200)}`);
  return result;
}

async function untilTerminal(read) {
  for (;;) {
    const t = await read();
    if (t && TERMINAL.includes(state(t.status))) return t;
    await new Promise((done) => setTimeout(done, 50));
  }
}

const PATHS = {
  blocking: async (client, c) => task(await sent(client, c)),
  push: async (client, c) => task(await sent(client, c)),
  poll: async (client, c) => {
    const { id } = await sent(client, c, false);
    return task(await untilTerminal(() => client.getTask({ id })));
  },
  list: async (client, c) => {
    const { id } = await sent(client, c, false);
    const read = async () =>
      (await client.listTasks({ includeArtifacts: true, status: 0 })).tasks.find((t) => t.id === id);
    return task(await untilTerminal(read));
  },
  stream: async (client, c) => streamed(client.sendMessageStream({ message: message(c) })),
  subscribe: async (client, c) => {
    const { id } = await sent(client, c, false);
    return streamed(client.resubscribeTask({ id }));
  },
};

export async function payloads(client, [casesJson]) {
  const results = {};
  for (const c of JSON.parse(casesJson)) {
    try {
      results[c.id] = await PATHS[c.path](client, c);
    } catch (e) {
      results[c.id] = { error: `${e?.name}: ${String(e?.message ?? e).slice(0, 2000)}` };
    }
  }
  return { results };
}
