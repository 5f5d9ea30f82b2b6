"""Writes fixtures/providers/gemini/hooks/*.json from the probe runs' hook logs.

    python3 scripts/probe/gemini/extract_hooks.py

Reads $PROBE_BASE/<run>/hooks.jsonl of the runs named below (run the
probes first: p_hooks.py lifecycle, afteragent, bgshell; p_explore.py dlg as
in README.md) and keeps, per fixture, the first hook call matching its
event and filter: the stdin payload as Gemini CLI sent it, and the
GEMINI_*/DING_*/CLAUDE_* environment the hook saw.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmprobe as g

OUT = os.path.join(g.REPO, "fixtures", "providers", "gemini", "hooks")

# name, run, event, filter on the payload, note
WANT = [
    ("SessionStart-startup", "hk-life", "SessionStart", {"source": "startup"}, "first start"),
    ("SessionStart-clear", "hk-life", "SessionStart", {"source": "clear"}, "after /clear (fires right after SessionEnd reason=clear)"),
    ("SessionStart-resume", "hk-life", "SessionStart", {"source": "resume"}, "start with --resume latest"),
    ("SessionEnd-clear", "hk-life", "SessionEnd", {"reason": "clear"}, "/clear"),
    ("SessionEnd-exit", "hk-life", "SessionEnd", {"reason": "exit"}, "/quit (fired twice, also for Ctrl+C twice)"),
    ("BeforeAgent", "hk-life", "BeforeAgent", {}, "a typed prompt submitted"),
    ("AfterAgent", "hk-life", "AfterAgent", {}, "end of a turn"),
    ("AfterAgent-stop-hook-active", "hk-afteragent", "AfterAgent", {"stop_hook_active": True},
     "the AfterAgent after the retry its own decision:deny started"),
    ("BeforeAgent-afteragent-retry", "hk-afteragent", "BeforeAgent", {"prompt": "MARK-AFTERAGENT please continue"},
     "BeforeAgent of the retry: prompt is the AfterAgent reason"),
    ("BeforeModel", "hk-life", "BeforeModel", {}, "before the main model request of a turn"),
    ("BeforeToolSelection", "hk-life", "BeforeToolSelection", {}, "before the main model request of a turn"),
    ("AfterModel", "hk-life", "AfterModel", {}, "after a (one-chunk) model response"),
    ("PreCompress-auto", "hk-life", "PreCompress", {"trigger": "auto"},
     "fires before every main model request, although nothing is compressed"),
    ("PreCompress-manual", "hk-life", "PreCompress", {"trigger": "manual"}, "/compress"),
    ("BeforeTool-shell", "dlg", "BeforeTool", {"tool_name": "run_shell_command"}, "mock:shell touch marker.txt, before the dialog"),
    ("Notification-shell", "dlg", "Notification", {"notification_type": "ToolPermission"},
     "the confirmation dialog for run_shell_command opened"),
    ("AfterTool-shell", "dlg", "AfterTool", {"tool_name": "run_shell_command"}, "after Allow once"),
    ("BeforeTool-write-file", "dlg", "BeforeTool", {"tool_name": "write_file"}, "mock:edit note.txt, before the dialog"),
    ("BeforeAgent-background-completion", "hk-bgshell-inject", "BeforeAgent", {"prompt": None},
     "the turn a finished background shell command started at idle (modelSteering + inject): prompt starts `User steering update:`"),
    # round 2 (p_round2.py)
    ("BeforeTool-ask-user", "r2-choice", "BeforeTool", {"tool_name": "ask_user"}, "mock:choice, before the ask_user dialog"),
    ("Notification-ask-user", "r2-choice", "Notification", {"details.type": "ask_user"},
     "the ask_user dialog opened"),
    ("AfterTool-ask-user", "r2-choice", "AfterTool", {"tool_name": "ask_user"}, "ask_user answered with Return (option 1)"),
    ("BeforeTool-exit-plan-mode", "r2-plan", "BeforeTool", {"tool_name": "exit_plan_mode"},
     "mock:plan in plan mode, before the plan approval dialog"),
    ("Notification-exit-plan-mode", "r2-plan", "Notification", {"details.type": "exit_plan_mode"},
     "the plan approval dialog opened"),
    ("AfterTool-exit-plan-mode", "r2-plan", "AfterTool", {"tool_name": "exit_plan_mode"},
     "plan approved with Return (option 1, auto-accept edits)"),
    ("BeforeTool-write-file-plan", "r2-plan", "BeforeTool", {"tool_name": "write_file"},
     "plan mode: the write_file of the plan into the plans directory (no confirmation dialog)"),
    ("SessionStart-project-hook", "r2-projhooks-a", "SessionStart", {"source": "startup"},
     "a hook declared in <project>/.gemini/settings.json (folder trust off); PROBE_TAG is the probe's marker of the command version"),
]


def matches(payload, flt):
    for k, v in flt.items():
        if "." in k:
            a, b = k.split(".", 1)
            if (payload.get(a) or {}).get(b) != v:
                return False
            continue
        if v is None:
            if not str(payload.get(k, "")).startswith("User steering update"):
                return False
        elif payload.get(k) != v:
            return False
    return True


def main():
    os.makedirs(OUT, exist_ok=True)
    written = []
    for name, run, event, flt, note in WANT:
        path = os.path.join(g.BASE, run, "hooks.jsonl")
        try:
            lines = [json.loads(l) for l in open(path)]
        except OSError:
            print("missing", path)
            continue
        hit = [h for h in lines if h["event"] == event and isinstance(h["payload"], dict) and matches(h["payload"], flt)]
        if event == "Notification" and run == "dlg":
            hit = [h for h in hit if "Shell" in json.dumps(h["payload"]) or "shell" in json.dumps(h["payload"])] or hit
        if not hit:
            print("no", name, "in", run)
            continue
        h = hit[0]
        env = {k: v for k, v in h["env"].items() if not k.startswith("DING_")}
        doc = {"_note": f"Gemini CLI 0.61.0 {event}: {note} (run {run}).", "event": event,
               "env": env, "dingEnvNames": sorted(k for k in h["env"] if k.startswith("DING_")),
               "payload": h["payload"]}
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
        written.append(name)
    print("wrote", len(written), ":", ", ".join(written))


if __name__ == "__main__":
    main()
