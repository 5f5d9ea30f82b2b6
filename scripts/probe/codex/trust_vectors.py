"""Test vectors for compile-agent: hooks `ding hook codex EVENT` (timeout 30)
declared and trusted per invocation; the real app-server must call every one
`trusted`. Writes fixtures/providers/codex/trust/ding-hook-vectors.json."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
import trust_hash
run = Run("trust-vectors", hooks_file=False)
try:
    hooks = {"hooks": {e: [{"hooks": [{"type": "command", "command": f"ding hook codex {e}", "timeout": 30}]}] for e in EVENTS}}
    keys = trust_hash.offline("/<session-flags>/config.toml", hooks)
    args = []
    for e, groups in hooks["hooks"].items():
        args += ["-c", f"hooks.{e}=[{{hooks=[{{type=\"command\",command={toml_str(groups[0]['hooks'][0]['command'])},timeout=30}}]}}]"]
    args += ["-c", "hooks.state={" + ",".join(f"{toml_str(k)}={{trusted_hash={toml_str(v)}}}" for k, v in keys.items()) + "}"]
    sock = os.path.join(run.dir, "as.sock")
    run.spawn([run.binary, "app-server", "--listen", f"unix://{sock}"] + args, "app-server")
    run.wait_for("socket", lambda: os.path.exists(sock), 20)
    rpc = Rpc(sock); rpc.initialize()
    listed = [h for d in rpc.call("hooks/list", {"cwds": [run.project]})["result"]["data"] for h in d["hooks"]]
    vectors = [{"event": e, "command": f"ding hook codex {e}", "timeout": 30,
                "key": k, "trustedHash": keys[k],
                "appServer": next({"currentHash": h["currentHash"], "trustStatus": h["trustStatus"], "timeoutSec": h["timeoutSec"]} for h in listed if h["key"] == k)}
               for e in EVENTS for k in [f"/<session-flags>/config.toml:{trust_hash.snake(e)}:0:0"]]
    ok = all(v["appServer"]["currentHash"] == v["trustedHash"] and v["appServer"]["trustStatus"] == "trusted" for v in vectors)
    json.dump({"_note": "sha256 trust hashes for `ding hook codex EVENT` (timeout 30), computed offline and confirmed by codex app-server 0.169.0 hooks/list", "argv": args, "vectors": vectors},
              open(os.path.join(REPO, "fixtures/providers/codex/trust/ding-hook-vectors.json"), "w"), indent=1)
    print("all trusted and equal:", ok, len(vectors))
finally:
    print("left:", run.close())
