// The hook channel (docs/adapter-protocol.md): one JSON line to the
// adapter on DING_HOOK_SOCKET, one answer line back, then the receipt if
// the answer was used. A call never rejects and never outlives its
// timeout: without an adapter it resolves to null at once, and OpenCode
// goes on as if the inbox were empty.
const WIRE = @@WIRE@@;
const RECEIPT = @@RECEIPT@@;
const MAX_ANSWER_BYTES = @@MAX_ANSWER_BYTES@@;

function hookSocket(env) {
  if (env.DING_HOOK_SOCKET) return env.DING_HOOK_SOCKET;
  if (env.DING_RUNTIME_DIR) return env.DING_RUNTIME_DIR + "/hook.sock";
  return null;
}

function identity(env) {
  const { DING_SESSION: session, DING_INCARNATION: incarnation, DING_GENERATION: generation } = env;
  return session && incarnation && generation ? { session, incarnation, generation } : null;
}

// Resolves to { answer, stdout, receipt(), drop() } or null. The caller
// sends the receipt once it passed the answer on, or drops the call: the
// adapter then takes the answer's files back.
function call(event, payload, timeoutMs) {
  const socket = hookSocket(process.env);
  if (!socket) return Promise.resolve(null);
  return new Promise((resolve) => {
    let settled = false;
    let buffer = "";
    let conn;
    const settle = (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!value && conn) conn.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => settle(null), timeoutMs);
    try {
      conn = net.createConnection({ path: socket });
    } catch {
      settle(null);
      return;
    }
    conn.setEncoding("utf8");
    conn.on("error", () => settle(null));
    conn.on("close", () => settle(null));
    conn.on("connect", () => {
      const line = { v: WIRE, provider: "opencode", event, identity: identity(process.env), payload, payloadTooLong: false, timeoutMs };
      conn.write(JSON.stringify(line) + "\n");
    });
    conn.on("data", (chunk) => {
      buffer += chunk;
      const end = buffer.indexOf("\n");
      if (end < 0) {
        if (buffer.length > MAX_ANSWER_BYTES) settle(null);
        return;
      }
      let answer;
      try {
        answer = JSON.parse(buffer.slice(0, end));
      } catch {
        settle(null);
        return;
      }
      if (typeof answer !== "object" || answer === null || typeof answer.stdout !== "string") {
        settle(null);
        return;
      }
      let stdout = null;
      try {
        stdout = answer.stdout.trim() ? JSON.parse(answer.stdout) : null;
      } catch {
        stdout = null;
      }
      const receipt = () => {
        try {
          conn.end(RECEIPT + "\n");
        } catch {}
      };
      const drop = () => conn.destroy();
      settle({ answer, stdout, receipt, drop });
    });
  });
}

// A call whose answer nothing waits on: it reports, and is not awaited.
function note(event, payload) {
  call(event, payload, NOTE_TIMEOUT_MS).then((got) => got && got.drop());
}
