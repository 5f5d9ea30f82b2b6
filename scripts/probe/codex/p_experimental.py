"""Does thread/queue/add need `experimentalApi: true` at initialize?"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *
run = Run("experimental", hooks_file=False)
try:
    pty, rpc, tid = run.start_remote(hooks=False, experimental=False)
    r = rpc.call("thread/queue/add", {"threadId": tid, "clientUserMessageId": "x", "input": [{"type": "text", "text": "hi", "text_elements": []}]})
    print("queue/add without experimentalApi:", json.dumps(r)[:300])
    r = rpc.call("thread/queue/list", {"threadId": tid}); print("queue/list:", json.dumps(r)[:200])
finally:
    print("left:", run.close())
