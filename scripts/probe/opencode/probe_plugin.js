// OpenCode probe plugin: logs every hook call and event; behaviour per hook from a control file;
// a Unix socket server (node:net) to run code with the plugin's `client` in scope.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

const RUN = "__RUN_DIR__";
const TAG = "__TAG__";
const INST = Math.random().toString(36).slice(2, 8);
const LOG = path.join(RUN, "plugin.jsonl");
const CTL = path.join(RUN, "ctl.json");
const SOCK0 = path.join(RUN, "rt", "plugin-" + TAG);

let CALLS = 0;
let CUR = 0;
function log(kind, data) {
  if (data && data.call === undefined) data = { call: CUR, ...data };
  try {
    fs.appendFileSync(LOG, JSON.stringify({ t: Date.now(), tag: TAG, inst: INST, kind, ...data }) + "\n");
  } catch {}
}

function ctl() {
  try { return JSON.parse(fs.readFileSync(CTL, "utf8")); } catch { return {}; }
}

let counter = 0;
function partId() {
  const ts = (BigInt(Date.now()) * 0x1000n + BigInt(++counter)).toString(16).padStart(12, "0").slice(-12);
  const abc = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let r = "";
  for (let i = 0; i < 14; i++) r += abc[Math.floor(Math.random() * 62)];
  return "prt_" + ts + r;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function behave(hook, input, output) {
  const c = ctl()[hook];
  if (!c) return;
  if (c.once) {
    const all = ctl(); delete all[hook];
    fs.writeFileSync(CTL, JSON.stringify(all));
  }
  log("behave", { hook, c });
  if (c.delay_ms) await sleep(c.delay_ms);
  if (c.hang) await new Promise(() => {});
  if (c.throw) throw new Error(c.throw);
  if (c.inject && hook === "chat.message") {
    const base = output.parts.find((p) => p.type === "text") || {};
    const part = { type: "text", text: c.inject, synthetic: c.synthetic !== false,
      sessionID: input.sessionID, messageID: output.message?.id ?? base.messageID };
    if (c.with_id !== false) part.id = partId();
    output.parts.push(part);
  }
  if (c.inject && hook === "tool.execute.after") {
    output.output = (output.output ?? "") + c.inject;
  }
  if (c.system && hook === "experimental.chat.system.transform") output.system.push(c.system);
}

function hook(name, me) {
  return async (input, output) => {
    log("hook", { call: me, hook: name, input, output });
    await behave(name, input, output);
    if (name === "chat.message") log("hook-after", { hook: name, parts: output.parts });
  };
}

export const ProbePlugin = async (ctx) => {
  const me = ++CALLS; CUR = me;
  const { client, project, directory, worktree, serverUrl } = ctx;
  log("init", { keys: Object.keys(ctx), project, directory, worktree, serverUrl: String(serverUrl),
    env_marker: process.env.OCPROBE_RUN ?? null, env_count: Object.keys(process.env).length,
    pid: process.pid, ppid: process.ppid, argv: process.argv, cwd: process.cwd(),
    bun: typeof Bun !== "undefined" ? Bun.version : null,
    client_keys: Object.keys(client), session_keys: Object.keys(client.session ?? {}),
    tui_keys: Object.keys(client.tui ?? {}) });
  const initCtl = ctl()["init"];
  if (initCtl?.hang) { log("init-hang", {}); await new Promise(() => {}); }
  if (initCtl?.throw) throw new Error(initCtl.throw);
  // control socket
  const SOCK = SOCK0 + "-" + INST + "-" + me + ".sock";
  try { fs.mkdirSync(path.dirname(SOCK), { recursive: true }); fs.rmSync(SOCK, { force: true }); fs.rmSync(SOCK0 + ".sock", { force: true }); fs.symlinkSync(SOCK, SOCK0 + ".sock"); } catch (e) { log("sock-prep", { error: String(e) }); }
  const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
  const server = net.createServer((conn) => {
    let buf = "";
    conn.on("data", async (d) => {
      buf += d.toString();
      const i = buf.indexOf("\n");
      if (i < 0) return;
      const line = buf.slice(0, i); buf = buf.slice(i + 1);
      let reply;
      try {
        const req = JSON.parse(line);
        const fn = new AsyncFunction("client", "ctx", "log", "sleep", req.code);
        const value = await fn(client, ctx, log, sleep);
        reply = { ok: true, value };
      } catch (e) {
        reply = { ok: false, error: String(e && e.stack || e) };
      }
      let s;
      try { s = JSON.stringify(reply); } catch (e) { s = JSON.stringify({ ok: false, error: "unserializable: " + e }); }
      conn.end(s + "\n");
    });
  });
  server.on("error", (e) => log("sock-error", { error: String(e) }));
  server.listen(SOCK, () => log("sock-listening", { call: me, sock: SOCK }));
  const names = ["chat.message", "chat.params", "chat.headers", "permission.ask", "command.execute.before",
    "tool.execute.before", "shell.env", "tool.execute.after", "experimental.chat.messages.transform",
    "experimental.chat.system.transform", "experimental.session.compacting", "experimental.compaction.autocontinue",
    "experimental.text.complete", "tool.definition"];
  const hooks = {};
  for (const n of names) hooks[n] = hook(n, me);
  // keep logs short for noisy hooks
  hooks["tool.definition"] = async (input, output) => { log("hook", { call: me, hook: "tool.definition", input }); };
  hooks["experimental.chat.messages.transform"] = async (input, output) => {
    log("hook", { call: me, hook: "experimental.chat.messages.transform", n: output.messages.length });
    await behave("experimental.chat.messages.transform", input, output);
  };
  hooks["chat.params"] = async (input, output) => { log("hook", { call: me, hook: "chat.params", sessionID: input.sessionID, agent: input.agent }); };
  hooks["chat.headers"] = async (input, output) => { log("hook", { call: me, hook: "chat.headers", sessionID: input.sessionID }); };
  hooks["experimental.chat.system.transform"] = async (input, output) => {
    log("hook", { call: me, hook: "experimental.chat.system.transform", sessionID: input.sessionID });
    await behave("experimental.chat.system.transform", input, output);
  };
  hooks.event = async ({ event }) => {
    log("event", { call: me, type: event.type, properties: event.properties });
    await behave("event", { event }, {});
  };
  hooks.config = async (cfg) => { log("hook", { call: me, hook: "config", keys: Object.keys(cfg) }); };
  hooks.dispose = async () => { log("hook", { call: me, hook: "dispose" }); };
  return hooks;
};
