"""Does thread/queue/add need `experimentalApi: true` at initialize?"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("experimental", hooks_file=False)
try:
    sock = os.path.join(run.dir, "as.sock")
    run.spawn([run.binary, "app-server", "--listen", f"unix://{sock}"], "app-server")
    run.wait_for("socket", lambda: os.path.exists(sock), 20)
    run.start(["--remote", f"unix://{sock}"]); run.wait_idle_composer()
    rpc = Rpc(sock); rpc.initialize(experimental=False)
    tid = run.wait_for("thread", lambda: (rpc.call("thread/loaded/list", {})["result"]["data"] or [None])[0], 20, poll=0.2)
    r = rpc.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": "x", "input": [{"type": "text", "text": "hi", "text_elements": []}]})
    print("queue/add without experimentalApi:", json.dumps(r)[:300])
    r = rpc.call("thread/queue/list", {"threadId": tid}); print("queue/list:", json.dumps(r)[:200])
finally:
    print("left:", run.close())
