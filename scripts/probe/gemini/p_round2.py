"""Round 2 probes: project hooks, the ask_user and plan dialogs, approval modes,
pickers, large pastes, the Esc Esc window.

    python3 scripts/probe/gemini/p_round2.py SCENARIO [SCENARIO...]

Scenarios (each one run directory `$PROBE_BASE/r2-<scenario>`, one Gemini CLI
at a time, every process ended by pid at the end):

  projhooks-a   hooks only in <project>/.gemini/settings.json, folder trust off
                (user settings): three starts, the hook command changed
                before the second; warnings on screen, hook log, trusted_hooks.json
  projhooks-b   the same with folder trust on and the folder in trustedFolders.json
  projhooks-u   the same with folder trust on and the folder not trusted
                (the trust dialog, answered "Don't trust")
  choice        mock:choice -> the ask_user dialog; Return, Esc, digit 2
  modes         the mode row in each approval mode (Shift+Tab cycle, Ctrl+Y)
  plan          --approval-mode plan, mock:plan -> plan file + exit_plan_mode;
                the plan approval dialog, Return (approve)
  plan-esc      the same, Esc on the approval dialog
  plan-feedback the same, option 3 with typed feedback and Return
  plan-enter    /plan typed at idle in default mode
  pickers       /permissions /mcp /tools /memory /chat /stats /auth /hooks /agents
                /extensions (CMDS='...' picks; TRUST=1: folder trust on, trusted by env)
  paste         bracketed paste of 900 characters on one line and of 12 lines
  escesc        Esc, then Esc after 150/250/350/450/550 ms on a draft
  notice-dialogs  DING's transport (paste, Return) into the ask_user and the plan
                approval dialogs (plan mode)

SAVE=0 skips writing fixtures.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmprobe as g

SAVE = os.environ.get("SAVE", "1") != "0"
SHIFT_TAB = b"\x1b[Z"
CTRL_Y = b"\x19"


# Notes written after the runs, from what the captures showed; they replace the generic note given at
# the call site.
NOTES = {
    "after-notice-into-ask-user":
        "DING transport (bracketed paste of a notice, then Return) into the ask_user dialog: the Return submitted the notice as the answer to the model's question (`User answered: Mock → [ding] 1 unread ...`; functionResponse `{\"answers\":{\"0\":\"[ding] ...\"}}`); the turn went on and ended, idle.",
    "after-notice-into-plan-approval":
        "DING transport (bracketed paste of a notice, then Return) into the plan approval dialog: the Return rejected the plan with the notice as feedback (`Feedback: [ding] 1 unread ...`; functionResponse `Plan rejected. User feedback: [ding] ...`); still in plan mode, idle.",
    "dialog-ask-user-after-paste":
        "The ask_user dialog after a bracketed paste of a DING notice (no Return yet): the paste moved the highlight to `3.` (the custom-value option) and filled it with the notice; the hint reads `Enter to submit · Esc to cancel`.",
    "dialog-plan-approval-after-paste":
        "The plan approval dialog after a bracketed paste of a DING notice (no Return yet): the paste moved the highlight to `3.` (the feedback option) and filled it with the notice; `Enter to submit`.",
    "idle-after-ask-user-esc":
        "Esc on the ask_user dialog: `ℹ Request cancelled.`, the turn ended with no model request and no AfterAgent; the cancelled turn is left out of the next request's history.",
    "idle-after-paste-12lines":
        "After the 12-line paste was submitted: the history echoes the full text (not the placeholder); the hint `Press Ctrl+O to expand pasted text` stays in the row above the status row.",
    "idle-after-plan-approve":
        "Return on the plan approval dialog (option 1, Yes, automatically accept edits): `✓ Exit Plan Mode … Plan approved: <plans dir>/mock-plan.md`, the mode row now `auto-accept edits Shift+Tab to plan`, idle.",
    "idle-after-plan-reject":
        "Esc on the plan approval dialog: `- Exit Plan Mode …`, `ℹ Request cancelled.`; no model request, no AfterAgent; the mode row stays `plan Shift+Tab to manual`, idle.",
    "idle-mode-plan-flag":
        "Started with --approval-mode plan, idle: the mode row reads `plan Shift+Tab to manual` from the first frame.",
    "idle-project-hooks-warning-changed":
        "Project-level hooks, second start after the command of all three hooks changed: the same warning again, naming the changed hooks (the trust key is `name:command`); no dialog; the hooks ran. A third start with the same commands showed no warning.",
    "idle-project-hooks-untrusted":
        "Project-level hooks, folder trust on, the trust dialog answered 3 (Don't trust): no warning, `ℹ Skipping project agents due to untrusted folder...`, the footer's sandbox column reads `untrusted`; no hook ran in this or the two later starts.",
    "paste-900chars":
        "Bracketed paste of 900 characters on one line into the empty composer, before Return: the composer shows the placeholder `[Pasted Text: 900 chars]` and the row above the status row `Press Ctrl+O to expand pasted text`; Return sends the full text (trailing space trimmed).",
    "paste-12lines":
        "Bracketed paste of 12 lines (299 characters) into the empty composer, before Return: the composer shows `[Pasted Text: 12 lines]` (above 5 lines or 500 characters the paste is folded); Return sends the full text.",
}


def save(run, name, screen, composer, note, snap=None):
    note = NOTES.get(name, note)
    snap = snap or run.snap()
    print(g.dump(snap, "save " + name))
    if SAVE:
        run.save(name, snap, note, screen, composer)


def show(run, label):
    s = run.snap()
    print(g.dump(s, label))
    return s


def submit(run, text, gap_ms=300):
    run.pty.send(text.encode(), gap_ms, g.CR)


def wait_any(run, texts, timeout=45):
    s = run.wait("any of " + repr(texts), lambda s: any(g.shows(s, t) for t in texts), timeout)
    return s, [t for t in texts if g.shows(s, t)]


def stream_requests(run):
    return [r for r in run.requests() if r["kind"] == "stream"]


def print_requests(run):
    print("== requests\n" + run.summary())
    for r in stream_requests(run):
        if r.get("functionResponses"):
            print(f"-- seq {r['seq']} functionResponses:", json.dumps(r["functionResponses"], ensure_ascii=False)[:1500])


def print_hooks(run):
    for h in run.hooks():
        print(f"hook {h['t']} {h['event']}{g.hook_detail(h)} PROBE_TAG={h['env'].get('PROBE_TAG')}")


# ------------------------------------------------------------ 1. project hooks

PROJ_EVENTS = ["SessionStart", "BeforeAgent", "AfterAgent"]


def write_project_hooks(run, tag):
    d = os.path.join(run.project, ".gemini")
    os.makedirs(d, exist_ok=True)
    hooks = {}
    for e in PROJ_EVENTS:
        cmd = run.hook_command(e)
        if tag:
            cmd = f"PROBE_TAG={tag} " + cmd
        hooks[e] = [{"matcher": "*", "hooks": [{"name": f"project-{e}", "type": "command", "command": cmd,
                                                "timeout": 30000}]}]
    with open(os.path.join(d, "settings.json"), "w") as f:
        json.dump({"hooks": hooks}, f, indent=1)


def project_hooks(variant):
    name = "r2-projhooks-" + variant
    settings = {}
    if variant in ("b", "u"):
        settings = {"security": {"folderTrust": {"enabled": True}}}
    run = g.Run(name, settings=settings, hooks=[])
    if variant == "b":
        with open(os.path.join(run.gemini_dir, "trustedFolders.json"), "w") as f:
            json.dump({run.project: "TRUST_FOLDER"}, f)
    trusted_hooks = os.path.join(run.gemini_dir, "trusted_hooks.json")
    try:
        for i, tag in enumerate(["v1", "v2", "v2"]):
            write_project_hooks(run, tag)
            before = len(run.hooks())
            run.start()
            t0 = time.time()
            if variant == "u" and i == 0:
                run.wait_text("Do you trust", 30)
                run.wait_quiet(800)
                # option 3: Don't trust
                run.pty.send(b"3")
                run.wait_quiet(800)
                show(run, "after 3 on trust dialog")
                if not g.idle_empty(run.snap()):
                    run.pty.send(g.CR)
            s = run.wait_idle(60)
            print(f"start {i + 1} (tag {tag}): idle at {s['_t'] - run.t_start:.2f}s")
            # SessionStart fires ~0.2 s after the composer; give it a deadline
            try:
                run.wait_for("SessionStart", lambda: len([h for h in run.hooks()[before:]
                                                            if h["event"] == "SessionStart"]) > 0, 8)
            except TimeoutError:
                print("no SessionStart within 8 s")
            s = run.wait_quiet(1500)
            warned = g.shows(s, "project-level hooks")
            print(f"start {i + 1}: warning on screen: {warned}")
            s = show(run, f"start {i + 1} quiet")
            if SAVE and variant in ("a", "b") and i == 0 and warned:
                save(run, f"idle-project-hooks-warning-{variant}", "ready", "empty",
                     ("Project-level hooks (" + ("folder trust off" if variant == "a" else
                                                 "folder trust on, folder in trustedFolders.json") +
                      "): first start. The CLI prints a warning in the history (not a dialog) listing the "
                      "project hooks, records them in ~/.gemini/trusted_hooks.json and runs them; the "
                      "composer is ready."), s)
            if SAVE and variant == "a" and i == 1 and warned:
                save(run, "idle-project-hooks-warning-changed", "ready", "empty",
                     "Project-level hooks, second start after the hook command changed: the same warning "
                     "again, naming only the changed hooks (the key is name:command); no dialog.", s)
            if SAVE and variant == "u" and i == 0:
                save(run, "idle-project-hooks-untrusted", "ready", "empty",
                     "Project-level hooks in a folder answered Don't trust: no warning, and no hook ran.", s)
            submit(run, f"hello start {i + 1}")
            try:
                run.wait_text(f"mock reply", 30)
            except TimeoutError:
                pass
            run.wait_quiet(1500)
            show(run, f"start {i + 1} after a turn")
            new = run.hooks()[before:]
            print(f"start {i + 1}: hooks ran: {[(h['event'], h['env'].get('PROBE_TAG')) for h in new]}")
            try:
                print("trusted_hooks.json:", open(trusted_hooks).read())
            except OSError:
                print("trusted_hooks.json: absent")
            print("stop left:", run.stop())
    finally:
        print_requests(run)
        print("left:", run.close())


# ------------------------------------------------------------ 2. ask_user

def choice():
    run = g.Run("r2-choice")
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(3500)
        results = []
        for key_name, key in (("enter", g.CR), ("esc", g.ESC), ("digit2", b"2")):
            n_before = len(stream_requests(run))
            submit(run, "mock:choice")
            s = run.wait_text("Which mock option", 30)
            s = run.wait_quiet(800)
            if key_name == "enter":
                save(run, "dialog-ask-user", "dialog", "unknown",
                     "ask_user (mock:choice): the question dialog with header Mock, the two options and the "
                     "free-text option; it replaces the composer. Return picks the highlighted option 1.", s)
            else:
                show(run, "ask_user before " + key_name)
            run.pty.send(key)
            s = run.wait_quiet(1000)
            show(run, f"after {key_name}")
            if key_name == "digit2" and g.shows(s, "Which mock option"):
                save(run, "dialog-ask-user-after-digit", "dialog", "unknown",
                     "ask_user after typing 2: the highlight moved to option 2, the dialog is still open "
                     "(or a review step); Return submits.", s)
                run.pty.send(g.CR)
                s = run.wait_quiet(1000)
                show(run, "after digit2 + enter")
                if g.shows(s, "Which mock option") or g.shows(s, "Submit"):
                    run.pty.send(g.CR)
                    s = run.wait_quiet(1000)
                    show(run, "after digit2 + enter + enter")
            try:
                run.wait_idle(20)
            except TimeoutError:
                show(run, "not idle after " + key_name)
            s = run.wait_quiet(1500)
            reqs = stream_requests(run)[n_before:]
            results.append((key_name, [r.get("functionResponses") for r in reqs]))
            if key_name == "enter":
                save(run, "idle-after-ask-user", "ready", "empty",
                     "Idle after the ask_user dialog was answered with Return (option 1): the tool result "
                     "line and the mock's text reply.", s)
            if key_name == "esc":
                save(run, "idle-after-ask-user-esc", "ready", "empty",
                     "Esc on the ask_user dialog: the tool call was cancelled and the turn ended.", s)
        for k, fr in results:
            print("RESULT", k, json.dumps(fr, ensure_ascii=False)[:1200])
    finally:
        print_requests(run)
        print_hooks(run)
        print("left:", run.close())


# ------------------------------------------------------------ 3. modes and plans

def modes():
    run = g.Run("r2-modes", hooks=[])
    try:
        run.start()
        run.wait_idle()
        s = run.wait_quiet(1500)
        rows = s["rows"]
        print("mode row default:", [r for r in rows if r.strip()][-5:])
        save(run, "idle-mode-default", "ready", "empty",
             "Default approval mode, idle: the mode row under the rule reads `Shift+Tab to accept edits`.", s)
        for i in range(4):
            run.pty.send(SHIFT_TAB)
            s = run.wait_quiet(800)
            show(run, f"after Shift+Tab x{i + 1}")
            row = mode_row(s)
            print(f"Shift+Tab x{i + 1}: mode row {row!r}")
            if SAVE and i == 0:
                save(run, "idle-mode-auto-edit", "ready", "empty",
                     "auto_edit approval mode (one Shift+Tab from default), idle: the mode row reads "
                     "`auto-accept edits Shift+Tab to plan`.", s)
            elif SAVE and i == 1:
                save(run, "idle-mode-plan", "ready", "empty",
                     "Plan approval mode (two Shift+Tab from default), idle: the mode row reads "
                     "`plan Shift+Tab to manual`.", s)
        # back to default: cycle until the default hint shows again
        for _ in range(4):
            if "Shift+Tab to accept edits" in mode_row(run.snap()):
                break
            run.pty.send(SHIFT_TAB)
            run.wait_quiet(600)
        run.pty.send(CTRL_Y)
        s = run.wait_quiet(800)
        print("Ctrl+Y: mode row", repr(mode_row(s)))
        save(run, "idle-mode-yolo", "ready", "empty",
             "YOLO approval mode (Ctrl+Y from default), idle: the mode row reads `YOLO Ctrl+Y`.", s)
        run.pty.send(CTRL_Y)
        s = run.wait_quiet(800)
        print("Ctrl+Y again: mode row", repr(mode_row(s)))
        show(run, "after Ctrl+Y twice")
        # a draft in plan mode: does the composer change?
    finally:
        print("left:", run.close())


def mode_row(snap):
    """The row between the rule and the composer block (as found in round 1)."""
    rows = snap["rows"]
    i = g.composer_row(snap)
    if i is None:
        return ""
    for j in range(i - 1, max(i - 6, -1), -1):
        if rows[j].startswith("─") or rows[j].startswith("▀") or set(rows[j].strip()) <= {"─"} and rows[j].strip():
            return "\n".join(r for r in rows[j + 1:i] if r.strip())
    return "\n".join(rows[max(i - 3, 0):i])


def plan(reject=False, feedback=None):
    name = "r2-plan-feedback" if feedback else "r2-plan-esc" if reject else "r2-plan"
    run = g.Run(name)
    try:
        run.start(["--approval-mode", "plan"])
        run.wait_idle()
        s = run.wait_quiet(3500)
        print("mode row at start:", repr(mode_row(s)))
        if not reject:
            save(run, "idle-mode-plan-flag", "ready", "empty",
                 "Started with --approval-mode plan, idle: the mode row in plan mode.", s)
        submit(run, "mock:plan")
        for _ in range(4):
            s, seen = wait_any(run, ["Plan Approval", "Apply this change", "Allow once", "mock: tool result seen",
                                     "Ready to start", "Approve"], 45)
            s = run.wait_quiet(800)
            show(run, "seen " + repr(seen))
            if any(t in seen for t in ("Apply this change", "Allow once")) and not g.shows(s, "Plan Approval"):
                if SAVE and not reject:
                    save(run, "dialog-plan-write", "dialog", "unknown",
                         "Plan mode, mock:plan: the write_file of the plan file into the plans directory asks "
                         "for confirmation.", s)
                run.pty.send(g.CR)
                continue
            break
        print_requests(run)
        if g.shows(s, "Plan Approval") or g.shows(s, "Approve") or g.shows(s, "Ready to start"):
            if not reject:
                save(run, "dialog-plan-approval", "dialog", "unknown",
                     "Plan mode, exit_plan_mode called (mock:plan): the plan approval dialog with the plan "
                     "text and the options; it replaces the composer. Return picks the highlighted option.", s)
            if feedback:
                run.pty.send(b"3")
                s = run.wait_quiet(800)
                show(run, "after 3")
                run.pty.send(feedback.encode())
                s = run.wait_quiet(800)
                save(run, "dialog-plan-feedback", "dialog", "unknown",
                     "Plan approval dialog after 3 and typed feedback: the dialog takes typed text in its "
                     "third option; Return sends it as a rejection with feedback.", s)
                run.pty.send(g.CR)
            else:
                run.pty.send(g.ESC if reject else g.CR)
            s = run.wait_quiet(1200)
            show(run, "after " + ("feedback" if feedback else "Esc" if reject else "Return"))
            try:
                run.wait_idle(30)
            except TimeoutError:
                show(run, "not idle")
            s = run.wait_quiet(1500)
            print("mode row after:", repr(mode_row(s)))
            if feedback:
                save(run, "idle-after-plan-feedback", "ready", "empty",
                     "Feedback typed into option 3 of the plan approval dialog and Return: the plan is "
                     "rejected with feedback, the mode row after it, idle.", s)
                return
            save(run, "idle-after-plan-reject" if reject else "idle-after-plan-approve", "ready", "empty",
                 ("Esc on the plan approval dialog" if reject else "Return on the plan approval dialog") +
                 ": the tool result in the history, the mode row after it, idle.", s)
    finally:
        print_requests(run)
        print_hooks(run)
        print("left:", run.close())


def plan_enter():
    run = g.Run("r2-plan-enter", hooks=[])
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(1500)
        run.pty.send(b"/plan")
        s = run.wait_quiet(800)
        show(run, "typed /plan")
        run.pty.send(g.CR)
        s = run.wait_quiet(1200)
        show(run, "/plan + Return")
        print("mode row:", repr(mode_row(s)))
    finally:
        print_requests(run)
        print("left:", run.close())


# ------------------------------------------------------------ 4. pickers

PICKERS = {
    "/permissions": ("picker-permissions", "/permissions at idle with folder trust on: the folder-trust dialog for "
                                           "the workspace replaces the composer."),
    "/auth": ("picker-auth", "/auth at idle: the auth dialog `Get started` replaces the composer (the same as on a "
                             "first start); option 2 Use Gemini API Key highlighted; Return picks it, Esc closes."),
    "/chat": ("picker-chat", "/chat at idle: the session browser (the same view as /resume, not boxed) replaces the "
                             "composer; with no saved session it reads `No auto-saved conversations found.` "
                             "`Press q to exit`."),
    "/hooks": ("picker-hooks", "/hooks at idle: a boxed `Configured Hooks` panel with a security warning replaces "
                               "the composer; `(Press Esc to close)`."),
}


def pickers():
    trust = os.environ.get("TRUST") == "1"
    run = g.Run("r2-pickers-trust" if trust else "r2-pickers", hooks=["SessionStart"],
                settings={"security": {"folderTrust": {"enabled": True}}} if trust else {}, trust_env=trust)
    cmds = os.environ.get("CMDS", "/permissions /mcp /tools /memory /chat /stats /auth /hooks /agents /extensions").split()
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(3500)
        for cmd in cmds:
            run.pty.send(cmd.encode())
            run.wait_quiet(500)
            run.pty.send(g.CR)
            s = run.wait_quiet(1200)
            ci = g.composer_row(s)
            print(f"== {cmd}: composer row {ci}; idle_empty={g.idle_empty(s)}")
            print(g.dump(s, cmd))
            name, note = PICKERS.get(cmd, (None, None))
            if SAVE and name and not g.idle_empty(s):
                save(run, name, "dialog", "unknown", note, s)
            # close whatever opened
            for _ in range(3):
                s = run.snap()
                if g.idle_empty(s):
                    break
                run.pty.send(g.ESC)
                run.wait_quiet(700)
            if not g.idle_empty(run.snap()):
                run.pty.send(g.CTRL_C)
                run.wait_quiet(700)
            show(run, "after closing " + cmd)
    finally:
        print("left:", run.close())


# ------------------------------------------------------------ 5. large paste

def paste():
    run = g.Run("r2-paste", hooks=[])
    one = "".join(f"w{i:03d} " for i in range(180))[:900]
    assert len(one) == 900
    twelve = "\n".join(f"pasted line {i + 1:02d} of twelve" for i in range(12))
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(1500)
        for label, text in (("900chars", one), ("12lines", twelve)):
            n = len(stream_requests(run))
            run.pty.send(g.PASTE_START + text.encode() + g.PASTE_END, origin="delivery")
            s = run.wait_quiet(800)
            save(run, f"paste-{label}", "ready", "nonempty",
                 f"Bracketed paste of {len(text)} characters ({text.count(chr(10)) + 1} lines) into the empty "
                 "composer, before Return: how the composer shows it.", s)
            run.pty.send(g.CR)
            run.wait_for("request", lambda: len(stream_requests(run)) > n, 30)
            run.wait_idle(30)
            s = run.wait_quiet(1200)
            r = stream_requests(run)[n]
            # the first prompt of a session shares its content with <session_context>: take the last part
            sent = [p.get("text", "") for p in r["body"]["contents"][-1]["parts"] if "text" in p][-1]
            print(f"{label}: sent {len(sent)} chars, equal={sent == text}, equal after strip={sent == text.strip()}, "
                  f"placeholder={'[Pasted Text' in sent}")
            if sent != text:
                print("SENT:", sent[:300], "...", sent[-200:])
            show(run, f"after {label} turn")
            if label == "12lines":
                save(run, "idle-after-paste-12lines", "ready", "empty",
                     "After the 12-line paste was submitted: how the prompt is echoed in the history.", s)
    finally:
        print_requests(run)
        print("left:", run.close())


# ------------------------------------------------------------ 6. Esc Esc window

def escesc():
    run = g.Run("r2-escesc", hooks=[])
    delays = [int(x) for x in os.environ.get("DELAYS", "150 250 350 450 550").split()]
    reps = int(os.environ.get("REPS", "2"))
    table = []
    try:
        run.start()
        run.wait_idle()
        run.wait_quiet(1500)
        for d in delays:
            for rep in range(reps):
                draft = f"draft {d} {rep}"
                run.pty.type(draft)
                run.wait_text(draft, 10)
                run.wait_quiet(300)
                run.pty.send(g.ESC, d, g.ESC)
                s = run.wait_quiet(900)
                ci = g.composer_row(s)
                kept = g.shows(s, draft)
                table.append((d, rep, "kept" if kept else "cleared"))
                print(f"{d} ms rep {rep}: {'kept' if kept else 'cleared'}; composer row {ci}: "
                      f"{s['rows'][ci] if ci is not None else None!r}")
                if kept:
                    run.pty.send(g.CTRL_C)
                    run.wait_gone(draft, 10)
                    run.wait_quiet(700)
        print("TABLE")
        for row in table:
            print(*row)
    finally:
        print("left:", run.close())


# ------------------------------------------------------------ 7. DING's transport into the new dialogs

NOTICE = "[ding] 1 unread inbox message in /home/agent/gm/inbox/new: n1.md. Read each file, then archive it"


def notice_dialogs():
    """DING's transport (bracketed paste of a notice, 200 ms, Return) into the ask_user dialog and into the
    plan approval dialog (plan mode from the start)."""
    run = g.Run("r2-notice-dialogs")
    try:
        run.start(["--approval-mode", "plan"])
        run.wait_idle()
        run.wait_quiet(3500)
        for prompt, marker, fname in (("mock:choice", "Which mock option", "ask-user"),
                                      ("mock:plan", "Ready to start implementation", "plan-approval")):
            n = len(stream_requests(run))
            submit(run, prompt)
            run.wait_text(marker, 45)
            run.wait_quiet(800)
            run.pty.send(g.PASTE_START + NOTICE.encode() + g.PASTE_END, origin="delivery")
            s = run.wait_quiet(800)
            save(run, f"dialog-{fname}-after-paste", "dialog", "unknown",
                 f"The {fname} dialog after a bracketed paste of a DING notice (no Return yet).", s)
            run.pty.send(g.CR, origin="delivery")
            s = run.wait_quiet(1500)
            show(run, f"{fname} after paste + Return")
            try:
                run.wait_idle(20)
            except TimeoutError:
                show(run, "not idle; Esc")
                run.pty.send(g.ESC)
                run.wait_quiet(1000)
            s = run.wait_quiet(1500)
            save(run, f"after-notice-into-{fname}", "ready", "empty",
                 f"DING transport (paste of a notice, 200 ms, Return) into the {fname} dialog: what it answered.", s)
            for r in stream_requests(run)[n:]:
                if r.get("functionResponses"):
                    print("RESULT", fname, json.dumps(r["functionResponses"], ensure_ascii=False)[:1200])
    finally:
        print_requests(run)
        print("left:", run.close())


SCEN = {
    "notice-dialogs": notice_dialogs,
    "projhooks-a": lambda: project_hooks("a"),
    "projhooks-b": lambda: project_hooks("b"),
    "projhooks-u": lambda: project_hooks("u"),
    "choice": choice,
    "modes": modes,
    "plan": lambda: plan(False),
    "plan-esc": lambda: plan(True),
    "plan-feedback": lambda: plan(True, "MARK-FEEDBACK more detail please"),
    "plan-enter": plan_enter,
    "pickers": pickers,
    "paste": paste,
    "escesc": escesc,
}

if __name__ == "__main__":
    for sc in sys.argv[1:]:
        print(f"######## {sc}")
        SCEN[sc]()
