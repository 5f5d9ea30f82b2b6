#!/usr/bin/env python3
"""A mock Gemini API (generativelanguage v1beta) on loopback, stdlib only.

    python3 mock_gemini.py --log REQUESTS.jsonl --port-file PORT [--port N]

Point Gemini CLI at it with GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT and
GEMINI_API_KEY=dummy. Every request is logged as one JSON line: seq, t (Unix
ms), method, path, query, kind (stream/generate/count/other), model, a few
headers, the full JSON body, and derived fields: `lastUser` (text of the last
user content), `texts` (every text part with its role and index),
`systemText` (the system instruction's text), `tools` (declared function
names) and `reply` (what the mock answered).

Scripted replies for :streamGenerateContent (the main turn), picked by the
last user content:

* it carries a functionResponse -> text `mock: tool result seen (NAME)`.
* `mock:shell [CMD]` -> functionCall run_shell_command {"command": CMD}
  (default `echo hi`).
* `mock:bg CMD` -> functionCall run_shell_command {"command": CMD,
  "is_background": true}.
* `mock:edit [PATH]` -> functionCall write_file {"file_path": PATH,
  "content": "edited by mock\\n"} (default `note.txt`).
* `mock:replace PATH` -> functionCall replace (old "a" -> new "b").
* `mock:slow [SECONDS]` -> text streamed in 10 chunks over SECONDS (default 5).
* `mock:long` -> a 60-line text reply.
* `mock:choice` -> functionCall ask_user with one `choice` question (two
  options, header `Mock`).
* `mock:plan` -> functionCall write_file of `mock-plan.md` into the plans
  directory named in the system instruction (Plan Mode text `... plan in
  `DIR/``; a bare file name when none is found), then, after its
  functionResponse, functionCall exit_plan_mode {"plan_filename":
  "mock-plan.md"}.
* anything else -> text `mock reply N`.

:generateContent (side calls: next speaker, loop detection, compression,
titles, routing) answers JSON filling the request's response schema when one
is given (`next_speaker` is always "user"), else a short text; a request
whose text asks for a `<state_snapshot>` gets one. :countTokens answers
{"totalTokens": 100}.
"""
import argparse
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

LOCK = threading.Lock()
STATE = {"seq": 0, "turn": 0}
ARGS = None

HEADERS = ("user-agent", "x-goog-api-client", "x-goog-api-key", "content-type", "accept")


def now_ms():
    return int(time.time() * 1000)


def part_texts(contents):
    out = []
    for i, c in enumerate(contents or []):
        for p in c.get("parts") or []:
            if "text" in p:
                out.append({"i": i, "role": c.get("role"), "text": p["text"]})
            elif "functionCall" in p:
                out.append({"i": i, "role": c.get("role"), "functionCall": p["functionCall"].get("name")})
            elif "functionResponse" in p:
                out.append({"i": i, "role": c.get("role"), "functionResponse": p["functionResponse"].get("name")})
    return out


def last_user(contents):
    for c in reversed(contents or []):
        if c.get("role") == "user":
            return c
    return None


def user_text(content):
    if not content:
        return ""
    return "\n".join(p.get("text", "") for p in content.get("parts") or [] if "text" in p)


def tool_names(body):
    names = []
    for t in body.get("tools") or []:
        for fd in t.get("functionDeclarations") or []:
            names.append(fd.get("name"))
    return names


def fill_schema(schema, key=""):
    if not isinstance(schema, dict):
        return "mock"
    typ = schema.get("type")
    if isinstance(typ, list):
        typ = [t for t in typ if t != "null"][0] if typ else "string"
    typ = (typ or "").lower()
    if key == "next_speaker":
        return "user"
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if typ == "object" or "properties" in schema:
        return {k: fill_schema(v, k) for k, v in (schema.get("properties") or {}).items()}
    if typ == "array":
        return []
    if typ in ("number", "integer"):
        return 0
    if typ == "boolean":
        return False
    return "mock"


def usage():
    return {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}


def text_response(text, finish=True):
    cand = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if finish:
        cand["finishReason"] = "STOP"
    out = {"candidates": [cand], "modelVersion": "mock"}
    if finish:
        out["usageMetadata"] = usage()
    return out


def call_response(name, args):
    return {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": name, "args": args}}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage(), "modelVersion": "mock"}


CHOICE_ARGS = {"questions": [{"question": "Which mock option should the turn take?", "header": "Mock",
                              "type": "choice",
                              "options": [{"label": "Mock option one", "description": "Mock option one"},
                                          {"label": "Mock option two", "description": "Mock option two"}]}]}
PLAN_FILE = "mock-plan.md"
PLAN_TEXT = "# Mock plan\n\n1. Read the parser.\n2. Change nothing yet.\n"


def last_prompt(contents):
    """Text of the last user content that has a text part (the prompt of the turn)."""
    for c in reversed(contents or []):
        if c.get("role") == "user" and any("text" in p for p in c.get("parts") or []):
            return user_text(c)
    return ""


def plans_dir(body):
    si = body.get("systemInstruction")
    text = user_text(si) if isinstance(si, dict) else ""
    m = re.search(r"implementation plan in `([^`]+?)/?`", text) or re.search(r"ONLY within: `([^`]+?)/?`", text)
    return m.group(1) if m else None


def plan_stream(body):
    """A list of (delay seconds, response chunk) and a label."""
    contents = body.get("contents") or []
    last = contents[-1] if contents else None
    if last and any("functionResponse" in p for p in last.get("parts") or []):
        name = [p["functionResponse"].get("name") for p in last["parts"] if "functionResponse" in p][0]
        if name == "write_file" and "mock:plan" in last_prompt(contents):
            return [(0, call_response("exit_plan_mode", {"plan_filename": PLAN_FILE}))], "plan-exit"
        return [(0, text_response(f"mock: tool result seen ({name})"))], "after-tool"
    text = user_text(last_user(contents))
    m = re.search(r"mock:shell(?:[ \t]+([^\n]+))?", text)
    if m:
        cmd = (m.group(1) or "echo hi").strip()
        return [(0, call_response("run_shell_command", {"command": cmd, "description": "mock shell"}))], "shell"
    m = re.search(r"mock:bg[ \t]+([^\n]+)", text)
    if m:
        return [(0, call_response("run_shell_command", {"command": m.group(1).strip(), "description": "mock background",
                                                        "is_background": True}))], "bg"
    m = re.search(r"mock:edit(?:[ \t]+(\S+))?", text)
    if m:
        path = m.group(1) or "note.txt"
        return [(0, call_response("write_file", {"file_path": path, "content": "edited by mock\n"}))], "edit"
    m = re.search(r"mock:replace[ \t]+(\S+)", text)
    if m:
        return [(0, call_response("replace", {"file_path": m.group(1), "old_string": "a",
                                              "new_string": "b", "instruction": "replace a by b"}))], "replace"
    m = re.search(r"mock:slow(?:[ \t]+([0-9.]+))?", text)
    if m:
        secs = float(m.group(1) or 5)
        chunks = [(secs / 10, text_response(f"slow part {i + 1}. ", finish=False)) for i in range(9)]
        chunks.append((secs / 10, text_response("slow done.")))
        return chunks, "slow"
    if "mock:choice" in text:
        return [(0, call_response("ask_user", CHOICE_ARGS))], "choice"
    if "mock:plan" in text:
        d = plans_dir(body)
        path = os.path.join(d, PLAN_FILE) if d else PLAN_FILE
        return [(0, call_response("write_file", {"file_path": path, "content": PLAN_TEXT}))], "plan-write"
    if "mock:long" in text:
        return [(0, text_response("\n".join(f"line {i + 1} of a long reply" for i in range(60))))], "long"
    with LOCK:
        STATE["turn"] += 1
        n = STATE["turn"]
    return [(0, text_response(f"mock reply {n}"))], "text"


def generate_reply(body):
    cfg = body.get("generationConfig") or {}
    schema = cfg.get("responseJsonSchema") or cfg.get("responseSchema")
    alltext = "\n".join(t.get("text", "") for t in part_texts(body.get("contents")))
    sys_text = user_text(body.get("systemInstruction") or {}) if isinstance(body.get("systemInstruction"), dict) else ""
    if schema:
        value = fill_schema(schema)
        return text_response(json.dumps(value)), "json"
    if "state_snapshot" in alltext or "state_snapshot" in sys_text:
        return text_response("<state_snapshot>\n<overall_goal>mock</overall_goal>\n</state_snapshot>"), "snapshot"
    if cfg.get("responseMimeType") == "application/json":
        return text_response('{"next_speaker": "user", "reasoning": "mock"}'), "json-mime"
    return text_response("mock side reply"), "side"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *a):
        pass

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw) if raw else None
        except Exception:
            return raw.decode(errors="replace")

    def _log(self, kind, model, body, reply, t):
        u = urlsplit(self.path)
        with LOCK:
            STATE["seq"] += 1
            seq = STATE["seq"]
        rec = {"seq": seq, "t": t, "method": self.command, "path": u.path, "query": parse_qs(u.query),
               "kind": kind, "model": model,
               "headers": {h: self.headers.get(h) for h in HEADERS if self.headers.get(h)},
               "reply": reply}
        if isinstance(body, dict):
            rec["lastUser"] = user_text(last_user(body.get("contents")))
            rec["texts"] = part_texts(body.get("contents"))
            si = body.get("systemInstruction")
            if isinstance(si, dict):
                rec["systemText"] = user_text(si)
            rec["tools"] = tool_names(body)
            contents = body.get("contents") or []
            if contents:
                fr = [p["functionResponse"] for p in contents[-1].get("parts") or [] if "functionResponse" in p]
                if fr:
                    rec["functionResponses"] = fr
        rec["body"] = body
        with LOCK, open(ARGS.log, "a") as f:
            f.write(json.dumps(rec) + "\n")

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        t = now_ms()
        self._log("other", None, None, "404", t)
        self._json(404, {"error": {"code": 404, "message": "mock: not found", "status": "NOT_FOUND"}})

    def do_POST(self):
        t = now_ms()
        body = self._body()
        path = urlsplit(self.path).path
        m = re.match(r"^/v1[a-z0-9]*/models/([^:]+):(\w+)$", path)
        if not m:
            self._log("other", None, body, "404", t)
            return self._json(404, {"error": {"code": 404, "message": "mock: not found", "status": "NOT_FOUND"}})
        model, method = m.group(1), m.group(2)
        body_d = body if isinstance(body, dict) else {}
        if method == "countTokens":
            self._log("count", model, body, "totalTokens=100", t)
            return self._json(200, {"totalTokens": 100})
        if method == "generateContent":
            reply, label = generate_reply(body_d)
            self._log("generate", model, body, label + ": " + reply["candidates"][0]["content"]["parts"][0]["text"][:200], t)
            return self._json(200, reply)
        if method == "streamGenerateContent":
            chunks, label = plan_stream(body_d)
            self._log("stream", model, body, label, t)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            try:
                for delay, chunk in chunks:
                    if delay:
                        time.sleep(delay)
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        self._log("other", model, body, "404", t)
        self._json(404, {"error": {"code": 404, "message": "mock: unknown method", "status": "NOT_FOUND"}})


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file")
    ap.add_argument("--port", type=int, default=0)
    ARGS = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    srv.daemon_threads = True
    if ARGS.port_file:
        tmp = ARGS.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(srv.server_address[1]))
        os.rename(tmp, ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
