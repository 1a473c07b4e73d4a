#!/usr/bin/env node
// A client built with the official TypeScript MCP SDK, for airlock's
// real-peer tests (cmd/airlock/peers_test.go). It starts the server command
// given after "--" (directly, or airlock in front of it), lists the tools
// (following nextCursor) and calls tools, and prints one JSON object on
// stdout with everything it saw:
//
//   {"server": {...}, "tools": [...],
//    "calls": [{"name", "result"} | {"name", "error": {code, message, data}}],
//    "progress": [notifications/progress received during each call],
//    "serverRequests": {"sampling": n, "elicitation": n, "roots": n}}
//
// Usage:
//   node ts-client.mjs [--no-roots] [--root DIR]... [--timeout MS] [--list]
//                      [--call NAME [--args JSON] [--progress]]... -- CMD [ARGS...]
//
// It answers the server's requests: sampling/createMessage with a fixed
// assistant message, elicitation/create by accepting fixed content, and
// roots/list with the directories of --root (default: none). Timeouts: each
// request --timeout ms (default 30000); the whole run is bounded too, so a
// test that drives it never hangs.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { pathToFileURL } from "node:url";

function usage(msg) {
  process.stderr.write(`ts-client: ${msg}\nusage: node ts-client.mjs [--no-roots] [--root DIR]... [--timeout MS] [--list] [--call NAME [--args JSON] [--progress]]... -- CMD [ARGS...]\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 0 || sep === argv.length - 1) usage("no server command after --");
const opts = argv.slice(0, sep);
const command = argv.slice(sep + 1);

let roots = true;
const rootDirs = [];
let list = false;
let timeout = 30000;
const calls = [];
for (let i = 0; i < opts.length; i++) {
  const o = opts[i];
  const next = () => {
    if (i + 1 >= opts.length) usage(`${o} needs a value`);
    return opts[++i];
  };
  switch (o) {
    case "--no-roots": roots = false; break;
    case "--root": rootDirs.push(next()); break;
    case "--timeout": timeout = Number(next()); break;
    case "--list": list = true; break;
    case "--call": calls.push({ name: next(), args: {}, progress: false }); break;
    case "--args":
      if (!calls.length) usage("--args before --call");
      calls[calls.length - 1].args = JSON.parse(next());
      break;
    case "--progress":
      if (!calls.length) usage("--progress before --call");
      calls[calls.length - 1].progress = true;
      break;
    default: usage(`unknown option ${o}`);
  }
}

// A hung peer must fail the run, not hang it.
const overall = setTimeout(() => {
  process.stderr.write("ts-client: overall timeout\n");
  process.exit(3);
}, timeout * (calls.length + 3));
overall.unref();

const capabilities = { sampling: {}, elicitation: {} };
if (roots) capabilities.roots = { listChanged: true };
const client = new Client({ name: "airlock-ts-client", version: "1.0.0" }, { capabilities });
const serverRequests = { sampling: 0, elicitation: 0, roots: 0 };
client.setRequestHandler(CreateMessageRequestSchema, async () => {
  serverRequests.sampling++;
  return { role: "assistant", content: { type: "text", text: "sampled by ts-client" }, model: "ts-client-model", stopReason: "endTurn" };
});
client.setRequestHandler(ElicitRequestSchema, async () => {
  serverRequests.elicitation++;
  return { action: "accept", content: { name: "ts-client", check: true, email: "ts@client.test", integer: 7 } };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  serverRequests.roots++;
  return { roots: rootDirs.map((d) => ({ uri: pathToFileURL(d).href, name: d })) };
});

// Pass the whole environment: StdioClientTransport passes only a safe
// subset (HOME, PATH, ...) otherwise, and airlock needs AIRLOCK_*.
const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), env: { ...process.env }, stderr: "inherit" });

const out = { calls: [], progress: [], serverRequests };
let wireProgress = 0;
try {
  await client.connect(transport, { timeout });
  // Count progress notifications as the transport delivers them. The SDK
  // runs notification handlers in a microtask, and when the last progress
  // notification and the response arrive in one read it removes the
  // progress handler first: its onprogress count is then one short (seen
  // direct as well as through a proxy).
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === "notifications/progress") wireProgress++;
    deliver(message, extra);
  };
  out.server = client.getServerVersion();
  if (list) {
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    out.tools = tools;
  }
  for (const c of calls) {
    wireProgress = 0;
    const options = { timeout };
    // onprogress makes the SDK send a progressToken; the count is taken on
    // the wire (see wireProgress), since the SDK may drop the last one.
    if (c.progress) options.onprogress = () => {};
    try {
      const result = await client.callTool({ name: c.name, arguments: c.args }, undefined, options);
      out.calls.push({ name: c.name, result });
    } catch (e) {
      if (!(e instanceof McpError)) throw e;
      out.calls.push({ name: c.name, error: { code: e.code, message: e.message, data: e.data } });
    }
    out.progress.push(wireProgress);
  }
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
