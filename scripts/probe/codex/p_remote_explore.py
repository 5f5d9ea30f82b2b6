"""Own app-server + TUI --remote: which thread exists before the first prompt,
what a second client sees."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("remote", hooks_file=False)
try:
    sock = os.path.join(run.dir, "as.sock")
    server = run.spawn([run.binary, "app-server", "--listen", f"unix://{sock}"] + session_flag_args(run), "app-server",
                       extra_env={"PROBE_TAG": "app-server-env"})
    run.wait_for("socket", lambda: os.path.exists(sock), 20)
    pty = run.start(["--remote", f"unix://{sock}"], extra_env={"PROBE_TAG": "tui-env"})
    s = run.wait_idle_composer(); print("composer up"); print("\n".join(r for r in s["rows"] if r.strip()))
    rpc = Rpc(sock); print("init", rpc.initialize()["result"])
    time.sleep(1)
    print("loaded:", json.dumps(rpc.call("thread/loaded/list", {})))
    print("list:", json.dumps(rpc.call("thread/list", {}))[:800])
    rpc.pump(1.0)
    print("notifications:", [m.get("method") for t, m in rpc.notifications])
    print("processes:", [(p, c[:100]) for p, c in run.codex_processes()])
finally:
    print("left:", [(p, c[:60]) for p, c in run.close()])
