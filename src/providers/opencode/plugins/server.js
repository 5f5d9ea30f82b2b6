// DING's server plugin for OpenCode, version @@VERSION@@. Written by
// `ding compile-agent opencode` (docs/providers/opencode.md); it is
// replaced whenever that runs again, so edit nothing here.
//
// It relays OpenCode's turn boundaries to DING's adapter and adds the
// unread inbox work the adapter claims to the request being made: the
// person's prompt (`chat.message`) or a tool's result
// (`tool.execute.after`), never a request of its own. Under an OpenCode
// started without DING it does nothing.
import net from "node:net";

const VERSION = @@VERSION@@;
const CALL_TIMEOUT_MS = @@CALL_TIMEOUT_MS@@;
const NOTE_TIMEOUT_MS = @@NOTE_TIMEOUT_MS@@;

//@@CALL@@

// The text the person (or DING's delivery) sent: the prompt's own text
// parts, not what another plugin added.
function promptText(parts) {
  return (parts || [])
    .filter((part) => part && part.type === "text" && !part.synthetic)
    .map((part) => part.text)
    .join("\n");
}

// A part id as OpenCode makes them (`prt_` and a time-ordered suffix), so
// the added text sorts after the prompt's own parts.
let partCount = 0;
function partId() {
  const time = (BigInt(Date.now()) * 0x1000n + BigInt(++partCount)).toString(16).padStart(12, "0").slice(-12);
  const letters = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let tail = "";
  for (let i = 0; i < 14; i++) tail += letters[Math.floor(Math.random() * letters.length)];
  return "prt_" + time + tail;
}

export const DingServer = async () => {
  if (!hookSocket(process.env)) return {};
  note("plugin.loaded", { plugin: "server", version: VERSION });
  // Which sessions are a subagent's (their prompts and tools are not the
  // person's turn, and DING's work does not go there), as the sessions'
  // own events say: no call of OpenCode's server is made for it.
  const parents = new Map();
  const parentOf = (sessionID) => parents.get(sessionID) || null;
  // Which sessions run a turn, as their own events say: a prompt sent into
  // one waits behind that turn, and an Esc or a rejected permission there
  // strands it unanswered (opencode-findings.md 4.2, 4.3), with anything
  // added to it.
  const busy = new Set();
  const context = (got) => (got && got.stdout && typeof got.stdout.context === "string" ? got.stdout.context : null);
  return {
    event: async ({ event }) => {
      const properties = (event && event.properties) || {};
      if (event && properties.sessionID && (event.type === "session.status" || event.type === "session.idle")) {
        const type = event.type === "session.idle" ? "idle" : properties.status && properties.status.type;
        if (type === "idle") busy.delete(properties.sessionID);
        else if (type) busy.add(properties.sessionID);
      }
      const info = properties.info;
      if (info && info.id && info.parentID && (event.type === "session.created" || event.type === "session.updated")) {
        parents.set(info.id, info.parentID);
      }
    },
    "chat.message": async (input, output) => {
      const payload = { sessionID: input.sessionID, parentID: parentOf(input.sessionID), text: promptText(output.parts), queued: busy.has(input.sessionID) };
      const got = await call("chat.message", payload, CALL_TIMEOUT_MS);
      const text = context(got);
      if (!text) return got && got.drop();
      try {
        const base = (output.parts || []).find((part) => part && part.messageID) || {};
        output.parts.push({ id: partId(), type: "text", text, synthetic: true, sessionID: input.sessionID, messageID: (output.message && output.message.id) || base.messageID });
      } catch {
        return got.drop();
      }
      got.receipt();
    },
    "tool.execute.before": async (input) => {
      note("tool.execute.before", { sessionID: input.sessionID, parentID: parentOf(input.sessionID), tool: input.tool });
    },
    "tool.execute.after": async (input, output) => {
      const payload = { sessionID: input.sessionID, parentID: parentOf(input.sessionID), tool: input.tool };
      const got = await call("tool.execute.after", payload, CALL_TIMEOUT_MS);
      const text = context(got);
      if (!text) return got && got.drop();
      try {
        output.output = (typeof output.output === "string" ? output.output : "") + "\n\n" + text;
      } catch {
        return got.drop();
      }
      got.receipt();
    },
  };
};
