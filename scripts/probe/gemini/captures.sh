#!/bin/sh
# Re-creates fixtures/providers/gemini/ (snapshots and hooks) from the real
# Gemini CLI, one run after the other. Run from the repository root:
#   sh scripts/probe/gemini/captures.sh
# Each line is one probe; see README.md. Takes about 15 minutes.
set -e
P=scripts/probe/gemini
E="python3 $P/p_explore.py"

# startup dialogs of a first start with no settings.json
BARE=1 $E ex-bare 'text:Do you trust' quiet:1000 \
  'save:startup-trust-folder:dialog:unknown:First start with no settings.json (GEMINI_API_KEY set): the folder-trust dialog, option 1 highlighted with a filled bullet; Return picks it.' \
  key:enter 'text:Get started' quiet:1000 \
  'save:startup-auth-dialog:dialog:unknown:First start, after trusting the folder: the auth dialog Get started; option 2 Use Gemini API Key preselected because GEMINI_API_KEY is set; Return picks it.' \
  key:enter 'text:Enter Gemini API Key' quiet:1000 \
  'save:startup-apikey-dialog:dialog:unknown:First start, after choosing Use Gemini API Key: the key entry dialog, prefilled with the value of GEMINI_API_KEY; Return submits it.' \
  key:enter quiet:3000

# idle, draft, busy with hooks
$E cap idle \
  'save:idle-sessionstart-running:ready:empty:Clean start with probe hooks: the first frame with the composer drawn while the SessionStart hook still shows as Executing Hook: probe-SessionStart in the status row (the label lingers about 3 s after the hook ended); typed keys are already kept here.' \
  quiet:1500 'save:idle-empty:ready:empty:Clean start (CLEAN_SETTINGS + probe hooks), quiet: banner, tips, status row with only ? for shortcuts, rule, mode hint Shift+Tab to accept edits, the composer block (gray bg) with > and the placeholder, the footer.' \
  'type:please refactor the parser' sleep:500 'save:draft:ready:nonempty:A typed draft in the composer: > then the text, software cursor (inverse cell) after it; terminal cursor hidden.' \
  key:ctrl-c quiet:500 'type:mock:slow 6' sleep:300 key:enter sleep:1800 \
  'save:busy-hooks-indicator:busy:empty:A turn running with probe hooks declared: the status row shows the spinner with Executing Hooks: probe-... instead of Thinking... (esc to cancel, Ns).' \
  hook:AfterAgent quiet:1500 'save:idle-after-turn:ready:empty:Idle after a streamed turn (probe hooks declared).'

# busy states without hooks
HOOKS=0 $E busy idle 'type:mock:slow 8' sleep:300 key:enter sleep:700 \
  'save:busy-thinking:busy:empty:A turn running (mock:slow 8, no hooks declared), first chunk not yet shown or just shown: spinner row above the composer with (esc to cancel, Ns).' \
  sleep:2000 'save:busy-streaming:busy:empty:Mid-turn while text streams: the reply grows above the spinner row; composer keeps the placeholder.' \
  'type:also look at the lexer' sleep:300 'save:busy-draft:busy:nonempty:A draft typed while a turn runs.' \
  key:enter sleep:300 'save:busy-queued:busy:empty:Return on a draft while busy: the draft is queued (Queued (press ↑ to edit)) and the composer is empty again.' \
  'text:mock reply' quiet:1500 'save:idle-after-queued:ready:empty:After the streamed turn ended, the queued message was submitted as its own turn and answered; idle again.'

# tool confirmations
$E dlg idle quiet:3500 'type:mock:shell touch marker.txt' sleep:300 key:enter hook:Notification quiet:800 \
  'save:dialog-shell:dialog:unknown:Tool confirmation for run_shell_command (mock:shell touch marker.txt), probe hooks declared: option 1 highlighted; Return picks it.' \
  key:enter hook:AfterAgent quiet:1500 'type:mock:edit note.txt' sleep:300 key:enter hook:Notification quiet:800 \
  'save:dialog-edit:dialog:unknown:Tool confirmation for write_file (mock:edit note.txt): a diff preview and the options; option 1 highlighted.' \
  key:esc quiet:1500 'save:idle-after-edit-esc:ready:empty:Esc on the write_file confirmation: the tool call is cancelled and the turn ends.'
HOOKS=0 $E dlg-notice idle quiet:1000 'type:mock:shell touch marker1.txt' sleep:300 key:enter 'text:Allow once' quiet:800 \
  'paste:[ding] 1 unread inbox message in /home/agent/gm/inbox/new: n1.md. Read each file, then archive it' sleep:300 \
  'save:dialog-shell-after-paste:dialog:unknown:The shell confirmation after a bracketed paste of a DING notice (no Return yet).' \
  key:enter quiet:1500 'save:after-notice-into-dialog:ready:empty:DING transport (bracketed paste of a notice, 300 ms, Return) into the shell confirmation: the paste was dropped, the Return chose the highlighted `1. Allow once`, the command ran (marker1.txt created) and the turn finished; the notice reached nobody.'

# pickers, /clear, /compress, keys
$E pick idle quiet:3500 type:/ sleep:500 'save:slash-menu:ready:nonempty:Typed / : the slash-command suggestion list under the composer; first entry highlighted.' \
  key:ctrl-u quiet:300 type:/model sleep:300 key:enter quiet:1000 'save:picker-model:dialog:unknown:/model: the model picker dialog.' \
  key:esc quiet:800 type:/theme sleep:300 key:enter quiet:1000 'save:picker-theme:dialog:unknown:/theme: the theme picker dialog.' \
  key:esc quiet:800 type:/settings sleep:300 key:enter quiet:1000 'save:picker-settings:dialog:unknown:/settings: the settings dialog.' \
  key:esc quiet:800 type:hello sleep:300 key:enter hook:AfterAgent quiet:800 type:/resume sleep:300 key:enter quiet:1000 \
  'save:picker-resume:dialog:unknown:/resume: the session browser (not a boxed dialog): `Chat Sessions (1 total)`, key help, a table with `❯ #1` on the selected row; Esc closes it.' key:esc quiet:800
$E clr idle quiet:3500 type:hello sleep:300 key:enter hook:AfterAgent quiet:800 type:/compress sleep:300 key:enter quiet:2500 \
  'save:after-compress:ready:empty:After /compress on a one-exchange conversation: `✦ Compression was not beneficial for this history size.` (PreCompress trigger=manual fired, two side requests).' \
  type:/clear sleep:300 key:enter quiet:2500 'save:after-clear:ready:empty:After /clear: the screen is cleared and redrawn with banner and tips, a fresh session; the status row shows `Executing Hooks: probe-SessionEnd, probe-SessionStart`.'
HOOKS=0 $E keys idle quiet:1000 'type:mock:slow 8' sleep:300 key:enter sleep:1500 key:esc sleep:800 \
  'save:idle-after-esc-busy:ready:empty:Esc while a reply streamed (mock:slow 8): the turn is cancelled.'
HOOKS=0 $E keys2 idle quiet:1000 key:enter quiet:800 'type:!' sleep:400 \
  'save:shell-mode:unrecognized:unknown:Typed ! on an empty composer: shell mode. The prompt glyph becomes ! with placeholder `Type your shell command` and the mode row says `shell mode enabled (esc to disable)`; text submitted here runs as a bash command, so it must not read as the ready composer. A notice must not start with ! (nor ? which opens the shortcuts help, nor / which opens the command menu).'
HOOKS=0 $E keys3 idle quiet:1000 type:hello sleep:300 key:enter 'text:mock reply' quiet:800 key:esc sleep:80 key:esc sleep:800 \
  'save:rewind-after-esc-esc:dialog:unknown:Esc Esc on an empty idle composer after one exchange: the rewind picker opens.' key:esc quiet:800
HOOKS=0 SETTINGS='{"experimental":{"modelSteering":true}}' $E steer idle quiet:1000 'type:mock:slow 6' sleep:300 key:enter sleep:1500 \
  'type:also the lexer' sleep:300 key:enter sleep:500 \
  'save:busy-steering-hint:busy:empty:experimental.modelSteering on: Return on a draft while busy; the text becomes a steering hint instead of a queued message.' \
  'text:mock reply' quiet:1500

# paste, hooks
SAVE=1 python3 $P/p_paste.py
for s in context afteragent sysmsg deny failures lifecycle bgshell; do python3 $P/p_hooks.py $s; done
STEER=0 python3 $P/p_hooks.py bgshell

# round 2 (findings section 6): project hooks, ask_user, modes, plan approval, pickers, pastes, Esc Esc
python3 $P/p_round2.py projhooks-a projhooks-b projhooks-u choice modes plan plan-esc plan-feedback plan-enter
CMDS='/chat /auth /hooks' python3 $P/p_round2.py pickers
python3 $P/p_round2.py paste escesc notice-dialogs
python3 $P/extract_hooks.py
