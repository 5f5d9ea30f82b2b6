"""What hook outputs do, judged by what the mock model server receives.

    python3 scripts/probe/gemini/p_hooks.py SCENARIO

Scenarios (each one run with every probe hook declared):
  context     SessionStart, BeforeAgent, AfterTool additionalContext and a
              BeforeModel llm_request rewrite, each with its own marker; where
              each marker lands in the requests, and on screen
  afteragent  AfterAgent {"decision":"deny","reason":...} once, then
              `continue:false`, then exit code 2: extra requests, where the
              reason lands, stop_hook_active
  sysmsg      systemMessage from BeforeAgent and AfterAgent: shown where?
  deny        BeforeAgent decision deny; BeforeAgent continue:false
  failures    a hook that exits 1, one that prints invalid JSON, one that
              exits 2, one that outlives its timeout (BeforeAgent, 3 s timeout)
  lifecycle   startup, a turn, /compress, /clear, /quit, then --resume
              latest, then two Ctrl+C to exit
  system      DING-like hooks from GEMINI_CLI_SYSTEM_SETTINGS_PATH beside the
              user's hooks: do both run, in which order, both contexts?
  bgshell     a background shell command (mock:bg) finishing while idle, with
              tools.shell.backgroundCompletionBehavior=inject and
              experimental.modelSteering (MODE=notify|silent, STEER=0)
Prints the request summary, the hook timeline and where each marker landed.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmprobe as g

scenario = sys.argv[1]


def where(run, marker):
    """Every place `marker` occurs in the logged requests: (seq, kind, location)."""
    out = []
    for r in run.requests():
        b = r.get("body") if isinstance(r.get("body"), dict) else {}
        for i, c in enumerate(b.get("contents") or []):
            for j, p in enumerate(c.get("parts") or []):
                blob = json.dumps(p)
                if marker in blob:
                    kind = "text" if "text" in p else ("functionResponse" if "functionResponse" in p else "other")
                    n = len(b["contents"])
                    out.append((r["seq"], r["kind"], f"contents[{i}/{n}] role={c.get('role')} part[{j}] {kind}"))
        si = b.get("systemInstruction")
        if si and marker in json.dumps(si):
            out.append((r["seq"], r["kind"], "systemInstruction"))
    return out


def excerpt(run, marker, width=160):
    for r in run.requests():
        blob = json.dumps(r.get("body"))
        k = blob.find(marker)
        if k >= 0:
            return blob[max(0, k - width):k + width]
    return None


def submit(run, text, wait_after=True, timeout=45):
    n = run.count("AfterAgent")
    run.pty.type(text)
    time.sleep(0.3)
    run.pty.send(g.CR)
    if wait_after:
        run.wait_for("AfterAgent", lambda: run.count("AfterAgent") > n, timeout)
        run.wait_quiet(800)


def screen_has(run, marker):
    s = run.snap()
    return [i for i, row in enumerate(s["rows"]) if marker in row]


def report(run, marks, markers=()):
    print("== requests\n" + run.summary())
    print("== timeline\n" + marks.timeline())
    for m in markers:
        print(f"== {m}: {where(run, m)}")
        print("   excerpt:", excerpt(run, m))


def ctx(event, text, **extra):
    out = {"hookSpecificOutput": dict({"hookEventName": event, "additionalContext": text}, **extra)}
    return out


if scenario == "context":
    run = g.Run("hk-context")
    run.reply("SessionStart", ctx("SessionStart", "MARK-SESSIONSTART context"), once=True)
    marks = g.Marks(run)
    try:
        run.start()
        s = run.wait_idle()
        run.wait_for("SessionStart", lambda: run.count("SessionStart") >= 1, 20)
        s = run.wait_quiet(1500)
        print(g.dump(s, "after start"))
        run.reply("BeforeAgent", ctx("BeforeAgent", "MARK-BEFOREAGENT context"))
        submit(run, "first prompt")
        print(g.dump(run.snap(), "after first"))
        run.save("idle-after-beforeagent-context", run.snap(),
                 "BeforeAgent answered hookSpecificOutput.additionalContext (MARK-BEFOREAGENT): nothing of it on screen.",
                 "ready", "empty")
        run.reply("AfterTool", ctx("AfterTool", "MARK-AFTERTOOL context"))
        submit(run, "mock:shell echo tooltest")
        # BeforeModel: rewrite the request, appending a user message
        run.reply("BeforeModel", {"hookSpecificOutput": {"hookEventName": "BeforeModel", "llm_request": {
            "messages": [{"role": "user", "content": "MARK-BEFOREMODEL replaced messages"}]}}})
        submit(run, "third prompt")
        print(g.dump(run.snap(), "after third"))
        marks.mark("end")
    finally:
        report(run, marks, ["MARK-SESSIONSTART", "MARK-BEFOREAGENT", "MARK-AFTERTOOL", "MARK-BEFOREMODEL",
                            "first prompt", "third prompt"])
        # the last main request's contents, to see what BeforeModel did
        mains = run.main_requests()
        if mains:
            print("last main request texts:", json.dumps(mains[-1]["texts"])[:1500])
        print("left:", run.close())

elif scenario == "afteragent":
    run = g.Run("hk-afteragent")
    marks = g.Marks(run)
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(1500)
        run.reply("AfterAgent", {"decision": "deny", "reason": "MARK-AFTERAGENT please continue"})
        n0 = len(run.requests())
        submit(run, "first prompt")
        run.wait_for("second AfterAgent", lambda: run.count("AfterAgent") >= 2, 30)
        s = run.wait_quiet(1500)
        print(g.dump(s, "after deny"))
        run.save("idle-after-afteragent-deny", s,
                 "AfterAgent answered decision deny + reason once: the CLI sent the reason as a new prompt and ran a second model call; then idle.",
                 "ready", "empty")
        print("requests for that turn:", len(run.requests()) - n0)
        # continue:false
        run.reply("AfterAgent", {"continue": False, "stopReason": "MARK-STOPREASON stop now"})
        submit(run, "second prompt")
        s = run.wait_quiet(1500)
        print(g.dump(s, "after continue:false"))
        # exit 2 with a reason on stderr
        run.reply("AfterAgent", "", exit_code=2, stderr="MARK-EXIT2-STDERR retry please")
        n1 = run.count("AfterAgent")
        submit(run, "third prompt")
        try:
            run.wait_for("AfterAgent x2", lambda: run.count("AfterAgent") >= n1 + 2, 10)
        except TimeoutError:
            print("exit 2: no second AfterAgent within 10 s")
        s = run.wait_quiet(1500)
        print(g.dump(s, "after exit 2"))
        marks.mark("end")
    finally:
        report(run, marks, ["MARK-AFTERAGENT", "MARK-STOPREASON", "MARK-EXIT2-STDERR"])
        for h in run.hooks():
            if h["event"] == "AfterAgent":
                p = h["payload"]
                print("AfterAgent", {k: p.get(k) for k in ("prompt", "prompt_response", "stop_hook_active")}, "answered", h["answered"][:80], "exit", h["exit"])
        print("left:", run.close())

elif scenario == "sysmsg":
    run = g.Run("hk-sysmsg")
    marks = g.Marks(run)
    try:
        run.reply("SessionStart", {"systemMessage": "MARK-SS-SYSMSG shown at start"})
        run.start()
        run.wait_idle()
        s = run.wait_quiet(1500)
        print(g.dump(s, "after start"))
        run.reply("BeforeAgent", {"systemMessage": "MARK-BA-SYSMSG from BeforeAgent"})
        run.reply("AfterAgent", {"systemMessage": "MARK-AA-SYSMSG from AfterAgent"})
        submit(run, "first prompt")
        s = run.wait_quiet(1500)
        print(g.dump(s, "after turn"))
        run.save("idle-after-systemmessage", s,
                 "BeforeAgent and AfterAgent answered systemMessage: how the CLI shows them.", "ready", "empty")
    finally:
        report(run, marks, ["MARK-SS-SYSMSG", "MARK-BA-SYSMSG", "MARK-AA-SYSMSG"])
        print("left:", run.close())

elif scenario == "deny":
    run = g.Run("hk-deny")
    marks = g.Marks(run)
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(1500)
        run.reply("BeforeAgent", {"decision": "deny", "reason": "MARK-DENY-REASON"})
        run.pty.type("denied prompt")
        time.sleep(0.3)
        run.pty.send(g.CR)
        s = run.wait_quiet(1500)
        print(g.dump(s, "after deny"))
        run.reply("BeforeAgent", {"continue": False, "stopReason": "MARK-STOP-REASON"})
        run.pty.type("stopped prompt")
        time.sleep(0.3)
        run.pty.send(g.CR)
        s = run.wait_quiet(1500)
        print(g.dump(s, "after continue false"))
        submit(run, "normal prompt")
    finally:
        report(run, marks, ["denied prompt", "stopped prompt", "MARK-DENY-REASON", "MARK-STOP-REASON"])
        print("left:", run.close())

elif scenario == "failures":
    run = g.Run("hk-failures", hook_timeout=3000)
    marks = g.Marks(run)
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(1500)
        for label, kw in [("exit1", dict(text='{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"MARK-EXIT1"}}', exit_code=1)),
                          ("badjson", dict(text="this is not json MARK-BADJSON")),
                          ("exit2", dict(text="", exit_code=2, stderr="MARK-EXIT2 blocked by stderr")),
                          ("hang", dict(text='{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"MARK-HANG"}}', sleep=8))]:
            run.reply("BeforeAgent", **kw)
            n = len(run.requests())
            t0 = time.time()
            run.pty.type(f"prompt {label}")
            time.sleep(0.3)
            run.pty.send(g.CR)
            marks.mark("submit " + label)
            try:
                run.wait_for("a request", lambda: len(run.requests()) > n, 15)
                print(f"{label}: request after {time.time() - t0:.1f}s")
            except TimeoutError:
                print(f"{label}: no request within 15 s")
            s = run.wait_quiet(1500)
            print(g.dump(s, "after " + label))
            notes = {
                "badjson": "BeforeAgent hook printed `this is not json MARK-BADJSON` (exit 0): shown as an info line `ℹ this is not json MARK-BADJSON [probe-BeforeAgent]`, the turn ran normally.",
                "exit2": "BeforeAgent hook exited 2 with `MARK-EXIT2 blocked by stderr` on stderr: `⚠ Hook(s) [probe-BeforeAgent] failed ...`, then `⚠ Agent execution blocked: MARK-EXIT2 blocked by stderr`; no model request, the prompt is not kept in history. (With an empty stderr, exit 2 was only a warning and the turn ran.)",
                "hang": "BeforeAgent hook slept 8 s with a 3000 ms timeout: killed at the timeout, `⚠ Hook(s) [probe-BeforeAgent] failed ...`, the turn went on 3.4 s after Return; its output was lost.",
            }
            if label in notes:
                run.save(f"idle-after-hook-{label}", s, notes[label], "ready", "empty")
            if label == "hang":
                time.sleep(6)  # let the parked hook finish so its log line lands
    finally:
        report(run, marks, ["MARK-EXIT1", "MARK-BADJSON", "MARK-HANG", "MARK-EXIT2", "prompt exit2", "prompt hang"])
        for h in run.hooks():
            if h["event"] == "BeforeAgent":
                print("BeforeAgent", h["payload"].get("prompt"), "t", h["t"], "dur", h["tEnd"] - h["t"], "exit", h["exit"])
        print("left:", run.close())

elif scenario == "lifecycle":
    run = g.Run("hk-life")
    marks = g.Marks(run)
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(1500)
        marks.mark("idle 1")
        submit(run, "first prompt")
        for cmd in ("/compress", "/clear"):
            run.pty.type(cmd)
            time.sleep(0.3)
            run.pty.send(g.CR)
            marks.mark(cmd)
            run.wait_quiet(1500)
        submit(run, "after clear prompt")
        run.pty.type("/quit")
        time.sleep(0.3)
        run.pty.send(g.CR)
        marks.mark("/quit")
        run.wait_for("exit", lambda: run.pty_proc.poll() is not None or run.pty.status()["child"]["state"] != "running", 20)
        s = run.snap()
        print(g.dump(s, "after /quit"))
        print("status:", run.pty.status().get("child"))
        run.stop()
        marks.mark("restart --resume latest")
        run.start(["--resume", "latest"])
        s = run.wait_idle()
        s = run.wait_quiet(2000)
        print(g.dump(s, "resumed"))
        run.save("idle-resumed", s, "Started with --resume latest: the previous conversation replayed above the composer.", "ready", "empty")
        submit(run, "resumed prompt")
        run.pty.send(g.CTRL_C)
        time.sleep(0.3)
        run.pty.send(g.CTRL_C)
        marks.mark("ctrl-c x2")
        run.wait_for("exit", lambda: run.pty.status()["child"]["state"] != "running", 20)
        time.sleep(1)
        print(g.dump(run.snap(), "after ctrl-c x2"))
    finally:
        report(run, marks, ["first prompt", "after clear prompt", "resumed prompt"])
        print(json.dumps(run.main_requests()[-1]["texts"])[:2000] if run.main_requests() else "")
        print("left:", run.close())

elif scenario == "bgshell":
    mode = os.environ.get("MODE", "inject")
    settings = {"tools": {"shell": {"backgroundCompletionBehavior": mode}}}
    if os.environ.get("STEER", "1") == "1":
        settings["experimental"] = {"modelSteering": True}
    run = g.Run("hk-bgshell-" + mode + ("" if os.environ.get("STEER", "1") == "1" else "-nosteer"), settings=settings)
    marks = g.Marks(run)
    try:
        run.start(["--approval-mode", "yolo"] if os.environ.get("YOLO") else [])
        run.wait_idle()
        run.wait_quiet(1500)
        n = run.count("AfterAgent")
        run.pty.type("mock:bg sleep 6; echo MARK-BG-DONE")
        time.sleep(0.3)
        run.pty.send(g.CR)
        marks.mark("submitted mock:bg")
        try:
            s = run.wait("dialog or turn end", lambda s: g.shows(s, "Allow once") or run.count("AfterAgent") > n, 20)
            if g.shows(s, "Allow once"):
                print(g.dump(s, "dialog"))
                run.pty.send(g.CR)
                marks.mark("allowed")
        except TimeoutError as e:
            print(e)
        run.wait_for("AfterAgent", lambda: run.count("AfterAgent") > n, 30)
        s = run.wait_quiet(800)
        marks.mark("idle after bg turn", s)
        print(g.dump(s, "idle after bg turn"))
        n2 = len(run.requests())
        try:
            run.wait_for("a request after the background command ends", lambda: len(run.requests()) > n2, 20)
            marks.mark("request at idle")
            run.wait_for("AfterAgent 2", lambda: run.count("AfterAgent") > n + 1, 30)
        except TimeoutError:
            marks.mark("no request within 20 s")
        s = run.wait_quiet(1500)
        print(g.dump(s, "end"))
        run.save(f"idle-after-bg-{mode}" + ("" if os.environ.get("STEER", "1") == "1" else "-nosteer"), s,
                 f"tools.shell.backgroundCompletionBehavior={mode}, modelSteering={os.environ.get('STEER', '1') == '1'}: "
                 "the screen after a background command (mock:bg) finished while idle; with inject + modelSteering "
                 "Gemini CLI started a turn by itself (`User steering update: ...`) with no terminal input.",
                 "ready", "empty")
    finally:
        report(run, marks, ["MARK-BG-DONE"])
        print("left:", run.close())
elif scenario == "system":
    # DING's hooks from a settings file of its own, named by
    # GEMINI_CLI_SYSTEM_SETTINGS_PATH, beside the user's hooks for the same events
    run = g.Run("hk-system", hooks=["SessionStart", "BeforeAgent", "AfterAgent"])
    sys_path = os.path.join(run.dir, "ding-system-settings.json")
    sys_hooks = {e: [{"matcher": "*", "hooks": [{"name": f"ding-{e}", "type": "command",
                                                 "command": run.hook_command("sys-" + e), "timeout": 30000}]}]
                 for e in ("SessionStart", "BeforeAgent", "AfterAgent")}
    with open(sys_path, "w") as f:
        json.dump({"hooks": sys_hooks}, f, indent=1)
    run.reply("sys-BeforeAgent", ctx("BeforeAgent", "MARK-SYS-BEFOREAGENT"))
    run.reply("BeforeAgent", ctx("BeforeAgent", "MARK-USER-BEFOREAGENT"))
    marks = g.Marks(run)
    try:
        run.start(extra_env={"GEMINI_CLI_SYSTEM_SETTINGS_PATH": sys_path})
        s = run.wait_idle()
        marks.mark("idle", s)
        s = run.wait_quiet(1500)
        print(g.dump(s, "after start"))
        submit(run, "first prompt")
        print(g.dump(run.snap(), "after turn"))
    finally:
        report(run, marks, ["MARK-SYS-BEFOREAGENT", "MARK-USER-BEFOREAGENT"])
        print("left:", run.close())
else:
    raise SystemExit("unknown scenario")
