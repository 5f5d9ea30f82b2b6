// DING's TUI plugin for OpenCode, version @@VERSION@@. Written by
// `ding compile-agent opencode` (docs/providers/opencode.md); it is
// replaced whenever that runs again, so edit nothing here.
//
// It is the native idle path's reporter: it tells DING's adapter which
// session this TUI shows and whether that session is idle with no
// permission or question waiting, in one parked `queue` call; when the
// adapter answers with a delivery (its screen read the composer empty),
// it sends exactly that text with the session's own prompt call. On the
// home screen, where no session exists yet, it starts one and shows it,
// as a prompt typed there would. It never touches the person's composer.
// It also relays the events that say a turn ended or a permission was
// asked or answered. Under an OpenCode started without DING it does
// nothing.
import net from "node:net";

const VERSION = @@VERSION@@;
const NOTE_TIMEOUT_MS = @@NOTE_TIMEOUT_MS@@;
const QUEUE_CALL_TIMEOUT_MS = @@QUEUE_CALL_TIMEOUT_MS@@;
const CALL_RETRY_MS = @@CALL_RETRY_MS@@;
// How often the route is compared (the TUI says nothing when it changes).
const ROUTE_EVERY_MS = 200;
// The conversation reported on the home screen: a delivery starts a new
// session there.
const NEW = @@NEW_SESSION@@;

//@@CALL@@

const tui = async (api) => {
  if (!hookSocket(process.env)) return;
  note("plugin.loaded", { plugin: "tui", version: VERSION });
  // An OpenCode whose TUI cannot say what it shows, or send a prompt, has
  // no native path: the work then holds, with this said.
  const session = api.state && api.state.session;
  const client = api.client && api.client.session;
  if (!api.route || !session || typeof session.status !== "function" || !client || typeof client.promptAsync !== "function") {
    note("launch", { mode: "native-unavailable", error: "this OpenCode's TUI plugin API has no route, session state or promptAsync" });
    return;
  }
  // Deliveries sent whose prompt has not shown up yet, by id; and those
  // that could not be sent, said once in the next report.
  const handed = new Map();
  let failed = [];
  let open = null;
  let offered = null;
  let stopped = false;
  let retry = null;

  const shown = () => {
    const route = api.route.current;
    if (route && route.name === "session" && route.params && route.params.sessionID) return route.params.sessionID;
    if (route && route.name === "home") return NEW;
    return null;
  };
  const statusOf = (id) => {
    if (id === null) return "unknown";
    if (id === NEW) return "idle";
    const session = api.state.session;
    if (session.permission(id).length > 0 || session.question(id).length > 0) return "active";
    const status = session.status(id);
    if (!status) return session.get(id) ? "idle" : "unknown";
    return status.type === "idle" ? "idle" : "active";
  };
  const report = () => {
    const conversation = shown();
    return { conversation, status: statusOf(conversation), queued: [...handed.keys()], failed };
  };

  const send = async (conversation, delivery) => {
    try {
      let sessionID = conversation;
      if (sessionID === NEW) {
        const created = await api.client.session.create({});
        if (!created || !created.data || !created.data.id) throw new Error("no session");
        sessionID = created.data.id;
        api.route.navigate("session", { sessionID });
      }
      const sent = await api.client.session.promptAsync({ sessionID, parts: [{ type: "text", text: delivery.text }] });
      if (sent && sent.error) throw new Error("refused");
    } catch {
      handed.delete(delivery.id);
      failed.push(delivery.id);
    }
  };

  const offer = () => {
    if (stopped) return;
    const now = report();
    const key = JSON.stringify(now);
    if (open && key === offered) return;
    offered = key;
    failed = [];
    const mine = call("queue", now, QUEUE_CALL_TIMEOUT_MS);
    open = mine;
    mine.then(async (got) => {
      const current = open === mine;
      if (current) open = null;
      if (!got) {
        // No adapter (yet): ask again in a moment, if nothing newer did.
        if (current && !stopped && !retry) {
          retry = setTimeout(() => {
            retry = null;
            offered = null;
            offer();
          }, CALL_RETRY_MS);
        }
        return;
      }
      const delivery = got.stdout && got.stdout.queue;
      if (!delivery || typeof delivery.id !== "string" || typeof delivery.text !== "string") {
        got.drop();
        // Parked, then ended with nothing: expired, or declined because a
        // call said a turn runs. Offer again, so that one call stays open:
        // a call that says so can reach DING after the event that ended
        // that turn, and no later event would offer (found by the
        // whole-agent simulation, OpenCode seed 7). The report says how
        // the session stands now; DING parks it only while it is idle.
        if (current && (got.answer.parked === "expired" || got.answer.parked === "declined")) {
          offered = null;
          offer();
        }
        return;
      }
      got.receipt();
      handed.set(delivery.id, delivery.text);
      await send(now.conversation, delivery);
      offered = null;
      offer();
    });
  };

  // A prompt of DING's showed up in the session: its turn started.
  const started = (text) => {
    for (const [id, sent] of handed) if (sent === text) handed.delete(id);
  };
  const relay = (event, payload) => {
    if (payload.sessionID && payload.sessionID !== shown()) return;
    note(event, payload);
  };
  const unsubscribe = [
    api.event.on("session.status", (e) => {
      relay("session.status", { sessionID: e.properties.sessionID, status: e.properties.status && e.properties.status.type });
      offer();
    }),
    api.event.on("session.idle", (e) => {
      relay("session.status", { sessionID: e.properties.sessionID, status: "idle" });
      offer();
    }),
    api.event.on("permission.asked", (e) => {
      relay("permission.asked", { sessionID: e.properties.sessionID });
      offer();
    }),
    api.event.on("permission.replied", (e) => {
      relay("permission.replied", { sessionID: e.properties.sessionID });
      offer();
    }),
    api.event.on("question.asked", (e) => {
      relay("question.asked", { sessionID: e.properties.sessionID });
      offer();
    }),
    api.event.on("question.replied", (e) => {
      relay("question.replied", { sessionID: e.properties.sessionID });
      offer();
    }),
    api.event.on("question.rejected", (e) => {
      relay("question.replied", { sessionID: e.properties.sessionID });
      offer();
    }),
    api.event.on("session.compacted", (e) => {
      relay("session.compacted", { sessionID: e.properties.sessionID });
    }),
    api.event.on("message.part.updated", (e) => {
      const part = e.properties && e.properties.part;
      if (part && part.type === "text" && handed.size > 0) {
        started(part.text);
        offer();
      }
    }),
  ];
  let route = JSON.stringify(api.route.current);
  const watch = setInterval(() => {
    const now = JSON.stringify(api.route.current);
    if (now !== route) {
      route = now;
      offer();
    }
  }, ROUTE_EVERY_MS);
  api.lifecycle.onDispose(() => {
    stopped = true;
    clearInterval(watch);
    if (retry) clearTimeout(retry);
    for (const off of unsubscribe) if (typeof off === "function") off();
  });
  offer();
};

export default { id: "ding", tui };
