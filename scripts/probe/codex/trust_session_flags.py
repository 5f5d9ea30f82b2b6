"""What the real app-server says about hooks declared and trusted per
invocation (-c hooks.EVENT=..., -c hooks.state={...}): keys, currentHash,
trustStatus. Writes fixtures/providers/codex/trust/hooks-list-session-flags.json
and the argv used."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("trust-flags", hooks_file=False)
try:
    args = session_flag_args(run)
    sock = os.path.join(run.dir, "as.sock")
    run.spawn([run.binary, "app-server", "--listen", f"unix://{sock}"] + args, "app-server")
    run.wait_for("socket", lambda: os.path.exists(sock), 20)
    rpc = Rpc(sock); rpc.initialize()
    listed = rpc.call("hooks/list", {"cwds": [run.project]})
    out = os.path.join(REPO, "fixtures/providers/codex/trust")
    json.dump(listed, open(os.path.join(out, "hooks-list-session-flags.json"), "w"), indent=1, ensure_ascii=False)
    json.dump(args, open(os.path.join(out, "session-flag-args.json"), "w"), indent=1, ensure_ascii=False)
    hooks = [h for d in listed["result"]["data"] for h in d["hooks"]]
    print({h["trustStatus"] for h in hooks}, len(hooks), hooks[0]["key"], hooks[0]["source"])
finally:
    print("left:", run.close())
