#!/usr/bin/env python3
"""Computes Codex 0.169.0 hook trust hashes offline and compares them with what
the real `codex app-server` reports in `hooks/list` (`currentHash`, `key`).

The derivation (from openai/codex codex-rs/hooks/src/engine/discovery.rs,
`command_hook_hash`, and codex-rs/config fingerprint `version_for_toml`):
sha256 over the compact JSON, keys sorted at every level, of
  {"event_name": <snake_case event>, "matcher": <if any>,
   "hooks": [{"type": "command", "command": C, "timeout": T (default 600, min 1;
              SessionEnd and Interrupt clamped to 3),
              "async": A, "statusMessage": S (if any)}]}
written "sha256:<hex>". The key is "<source file>:<event_snake>:<group>:<handler>".
"""
import hashlib, json, os, re, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cxprobe

# Codex clamps these events' timeouts to 3 s (a warning in hooks/list) and
# hashes the clamped value.
CLAMPED_TO_3S = {"SessionEnd", "Interrupt"}

def snake(event):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()

def trusted_hash(event, handler, matcher=None):
    timeout = max(1, handler.get("timeout", 600))
    if event in CLAMPED_TO_3S:
        timeout = min(timeout, 3)
    hook = {"type": "command", "command": handler["command"],
            "timeout": timeout, "async": handler.get("async", False)}
    if handler.get("statusMessage") is not None:
        hook["statusMessage"] = handler["statusMessage"]
    identity = {"event_name": snake(event), "hooks": [hook]}
    if matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

def offline(hooks_path, hooks):
    out = {}
    for event, groups in hooks["hooks"].items():
        for g, group in enumerate(groups):
            for h, handler in enumerate(group["hooks"]):
                key = f"{hooks_path}:{snake(event)}:{g}:{h}"
                out[key] = trusted_hash(event, handler, group.get("matcher"))
    return out

if __name__ == "__main__":
    run = cxprobe.Run("trust-hash")
    hooks = run.hooks_json()
    # Vary the shapes: a matcher, a status message, a default timeout, async.
    hooks["hooks"]["PreToolUse"][0]["matcher"] = "^Bash$"
    hooks["hooks"]["PostToolUse"][0]["hooks"][0]["statusMessage"] = "ding: checking the inbox"
    del hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"]
    hooks["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "echo 'a \"quoted\" ü'", "timeout": 5})
    path = os.path.join(run.codex_home, "hooks.json")
    json.dump(hooks, open(path, "w"), indent=1)
    sock = os.path.join(run.dir, "as.sock")
    server = run.spawn([run.binary, "app-server", "--listen", f"unix://{sock}"], "app-server")
    run.wait_for("app-server socket", lambda: os.path.exists(sock), 20)
    rpc = cxprobe.Rpc(sock)
    print("initialize:", json.dumps(rpc.initialize())[:300])
    listed = rpc.call("hooks/list", {"cwds": [run.project]})
    json.dump(listed, open(os.path.join(run.dir, "hooks-list.json"), "w"), indent=1)
    mine = offline(path, hooks)
    entries = [h for d in listed["result"]["data"] for h in d["hooks"]]
    match = 0
    for e in entries:
        ok = mine.get(e["key"]) == e["currentHash"]
        match += ok
        print(("OK  " if ok else "BAD ") + e["key"].replace(run.dir, "RUN"), e["currentHash"][:20], e["trustStatus"])
    print(f"{match}/{len(entries)} offline hashes equal currentHash; {len(mine)} computed")
    rpc.close()
    print("left:", run.close())
