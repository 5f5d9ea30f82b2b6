"""Loopback Chat Completions (SSE) mock for OpenCode probes. Logs every request.
Replies: last user text contains 'mock:bash CMD' -> a bash tool call (CMD up to end of line);
'mock:question' -> a `question` tool call (one question, options Alpha and Bravo);
'mock:slow N' -> 'ACK ...' streamed over N seconds; otherwise 'ACK'. After a tool result: 'ACK after tool';
a title request -> 'Mock title'.
"""
import json, sys, time, threading, argparse, re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--log", required=True)
ap.add_argument("--port-file", required=True)
args = ap.parse_args()
lock = threading.Lock()
seq = [0]

def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "mock-model", "object": "model"}]}).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(n)
        try:
            req = json.loads(raw)
        except Exception:
            req = {"_raw": raw.decode(errors="replace")}
        msgs = req.get("messages", [])
        last = msgs[-1] if msgs else {}
        users = [m for m in msgs if m.get("role") == "user"]
        last_user = text_of(users[-1].get("content")) if users else ""
        system = " ".join(text_of(m.get("content")) for m in msgs if m.get("role") == "system")
        kind = "title" if ("title" in system.lower()[:400] and not req.get("tools")) else "main"
        reply = "ACK"; tool = None; slow = 0
        if last.get("role") == "tool":
            reply = "ACK after tool"
        elif kind == "main":
            m = re.search(r"mock:bash ([^\n]+)", last_user)
            if m:
                tool = m.group(1).strip()
            if "mock:question" in last_user:
                tool = "__question__"
            m = re.search(r"mock:slow (\d+)", last_user)
            if m:
                slow = int(m.group(1))
        elif kind == "title":
            reply = "Mock title"
        with lock:
            seq[0] += 1
            s = seq[0]
            rec = {"seq": s, "t": time.time(), "path": self.path, "kind": kind, "last_role": last.get("role"),
                   "last_user": last_user, "n_messages": len(msgs), "tools": len(req.get("tools") or []),
                   "reply": reply if not tool else "tool:bash " + tool, "body": req}
            with open(args.log, "a") as f:
                f.write(json.dumps(rec) + "\n")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        cid = f"chatcmpl-{s}"
        def chunk(delta, finish=None):
            d = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": "mock-model",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.wfile.write(b"data: " + json.dumps(d).encode() + b"\n\n"); self.wfile.flush()
        try:
            chunk({"role": "assistant", "content": ""})
            if tool == "__question__":
                q = {"questions": [{"question": "Which option do you pick?", "header": "Mock", "options": [
                    {"label": "Alpha", "description": "the first"}, {"label": "Bravo", "description": "the second"}]}]}
                chunk({"tool_calls": [{"index": 0, "id": f"call_{s}", "type": "function",
                        "function": {"name": "question", "arguments": json.dumps(q)}}]})
                chunk({}, "tool_calls")
            elif tool:
                chunk({"tool_calls": [{"index": 0, "id": f"call_{s}", "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": tool, "description": "probe command"})}}]})
                chunk({}, "tool_calls")
            else:
                if slow:
                    steps = slow * 4
                    for i in range(steps):
                        chunk({"content": "." if i else "ACK "}); time.sleep(0.25)
                else:
                    chunk({"content": reply})
                chunk({}, "stop")
            u = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": "mock-model",
                 "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}
            self.wfile.write(b"data: " + json.dumps(u).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n"); self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
open(args.port_file, "w").write(str(srv.server_address[1]))
srv.serve_forever()
