"""What could carry work that arrives while a file-change approval is open
(2026-12-04): own app-server, TUI `--remote`, every hook logged. The human
asks for `mock:edit PATH` (Codex offers no apply_patch tool for the mock
model, so the edit is an `apply_patch` heredoc through exec_command, which
Codex intercepts as a file change); while the dialog is open a second
client sends `turn/steer` (S) or `thread/inject_items` (I); then the human
answers Yes or Esc. Which request carries the text, and which hooks fired?

  python3 scripts/probe/codex/p_edit_steer.py steer|inject yes|esc"""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cxprobe import *

how, answer = sys.argv[1], sys.argv[2]
run = Run(f"edit-{how}-{answer}", hooks_file=False)
m = Marks(run)
DIALOG = "Press enter to confirm or esc to cancel"
try:
    pty, rpc, tid = run.start_remote()
    target = os.path.join(run.dir, "edit.txt")
    n = len(run.hooks())
    pty.send(f"mock:edit {target}".encode(), 300, CR); m.mark("human prompt mock:edit")
    s = run.wait("dialog", lambda s: shows(s, DIALOG), 30); m.mark("dialog open", s)
    # The running turn's id, as the hooks saw it (this client gets no
    # turn notifications for a thread it did not start or resume).
    turns = [h["payload"]["turn_id"] for h in run.hooks()[n:] if h["event"] == "UserPromptSubmit"]
    tag = f"{how}-{answer}"
    if how == "steer":
        reply = rpc.call("turn/steer", {"threadId": tid, "expectedTurnId": turns[-1] if turns else None,
                                        "input": [{"type": "text", "text": notice(tag), "text_elements": []}]})
    else:
        reply = rpc.call("thread/inject_items", {"threadId": tid, "items": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": notice(tag)}]}]})
    m.mark(f"rpc {how}: {json.dumps(reply)[:150]}")
    time.sleep(2.0)
    pty.send(CR if answer == "yes" else ESC); m.mark(f"human {answer}")
    run.wait("idle", idle_screen, 30); time.sleep(3.0)
    print("file created:", os.path.exists(target))
    print(f"{tag} reached (seq, turn, call):", run.seen(tag))
    if answer == "esc":
        n_stop = run.stops()
        pty.send(b"next human prompt", 300, CR)
        run.wait_for("Stop", lambda: run.stops() > n_stop, 30); time.sleep(1)
        print(f"{tag} reached after the next human prompt:", run.seen(tag))
    print("hooks:", [h["event"] + hook_detail(h) for h in run.hooks()[n:]])
finally:
    print(m.timeline())
    print(run.summary())
    print("left:", [(p, c[:60]) for p, c in run.close()])
