// OpenCode TUI probe plugin: reports the route (which session the TUI shows), logs bus events,
// and serves eval over a Unix socket with `api` in scope.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

const RUN = "__RUN_DIR__";
const LOG = path.join(RUN, "plugin.jsonl");
const SOCK = path.join(RUN, "rt", "tui.sock");
function log(kind, data) {
  try { fs.appendFileSync(LOG, JSON.stringify({ t: Date.now(), tag: "tui", kind, ...data }) + "\n"); } catch {}
}

export default {
  id: "ding-probe-tui",
  tui: async (api, options, meta) => {
    log("tui-init", { keys: Object.keys(api), route: api.route.current, meta: { id: meta.id, state: meta.state },
      env_marker: process.env.OCPROBE_RUN ?? null, pid: process.pid });
    let last = JSON.stringify(api.route.current);
    const timer = setInterval(() => {
      const now = JSON.stringify(api.route.current);
      if (now !== last) { log("tui-route", { from: JSON.parse(last), to: api.route.current }); last = now; }
    }, 50);
    api.lifecycle.onDispose(() => { clearInterval(timer); log("tui-dispose", {}); });
    for (const type of ["session.status", "session.idle", "tui.session.select", "tui.prompt.append",
      "tui.command.execute", "permission.asked", "permission.replied", "message.updated", "session.created"]) {
      api.event.on(type, (e) => log("tui-event", { type, properties: type === "message.updated" ? { id: e.properties?.info?.id, role: e.properties?.info?.role, sid: e.properties?.info?.sessionID } : e.properties, route: api.route.current }));
    }
    const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
    try { fs.rmSync(SOCK, { force: true }); } catch {}
    const server = net.createServer((conn) => {
      let buf = "";
      conn.on("data", async (d) => {
        buf += d.toString();
        const i = buf.indexOf("\n");
        if (i < 0) return;
        const line = buf.slice(0, i);
        let reply;
        try {
          const req = JSON.parse(line);
          const fn = new AsyncFunction("api", "log", req.code);
          reply = { ok: true, value: await fn(api, log) };
        } catch (e) { reply = { ok: false, error: String(e && e.stack || e) }; }
        let s;
        try { s = JSON.stringify(reply); } catch (e) { s = JSON.stringify({ ok: false, error: "unserializable " + e }); }
        conn.end(s + "\n");
      });
    });
    server.on("error", (e) => log("tui-sock-error", { error: String(e) }));
    server.listen(SOCK, () => log("tui-sock-listening", {}));
  },
};
