#!/usr/bin/env bash
# Installs the pinned real harnesses that the real-pane tests and the
# evaluation run model-free against DING's loopback model servers, from the
# npm registry, into a cache directory outside the repository. Once: a
# complete install is reused, and checking it takes a few milliseconds.
#
#   scripts/install-harnesses.sh            install if needed, print the paths
#   scripts/install-harnesses.sh --check    print the paths, or fail if absent
#
# It prints the four harnesses as shell assignments, and writes the same
# lines to DIR/harnesses.env:
#
#   DING_HARNESS_CLAUDE=DIR/node_modules/@anthropic-ai/claude-code-linux-x64/claude
#   DING_HARNESS_CODEX=DIR/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
#   DING_HARNESS_GEMINI=DIR/node_modules/@google/gemini-cli/bundle/gemini.js
#   DING_HARNESS_OPENCODE=DIR/node_modules/opencode-linux-x64/bin/opencode
#
# DIR is $DING_HARNESS_DIR if set, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/st2-ding/harnesses/<version key>.
#
# npm runs with --ignore-scripts: the packages' install scripts only pick or
# copy the platform binary, which we call directly. Claude Code and Codex
# ship native binaries, so the machine's Node 20 is enough even where a
# package asks for a newer one; Gemini CLI is a JavaScript bundle that runs
# on Node 20 (`#!/usr/bin/env node`). OpenCode's `opencode` wrapper only
# finds its platform binary and execs it; that binary is called directly.
# `@opencode-ai/plugin` is installed beside it for the scratch homes: each
# configuration directory OpenCode reads needs it, or OpenCode starts an
# npm install of its own. Linux x86_64 only (the platform packages pinned).
# See docs/providers/model-servers.md.
set -euo pipefail

CLAUDE_VERSION=2.1.328
CODEX_VERSION=0.169.0
GEMINI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33
KEY="claude-code-${CLAUDE_VERSION}+codex-${CODEX_VERSION}+gemini-cli-${GEMINI_VERSION}+opencode-${OPENCODE_VERSION}"
PACKAGES=(
  "@anthropic-ai/claude-code@${CLAUDE_VERSION}"
  "@anthropic-ai/claude-code-linux-x64@${CLAUDE_VERSION}"
  # Brings @openai/codex-linux-x64 (npm:@openai/codex@${CODEX_VERSION}-linux-x64).
  "@openai/codex@${CODEX_VERSION}"
  "@google/gemini-cli@${GEMINI_VERSION}"
  "opencode-ai@${OPENCODE_VERSION}"
  "opencode-linux-x64@${OPENCODE_VERSION}"
  "@opencode-ai/plugin@${OPENCODE_VERSION}"
)
CLAUDE_REL=node_modules/@anthropic-ai/claude-code-linux-x64/claude
CODEX_REL=node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
GEMINI_REL=node_modules/@google/gemini-cli/bundle/gemini.js
OPENCODE_REL=node_modules/opencode-linux-x64/bin/opencode

check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  -h | --help)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 0
    ;;
  *)
    echo "install-harnesses: unknown argument $1 (try --help)" >&2
    exit 2
    ;;
esac

dir="${DING_HARNESS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/st2-ding/harnesses/$KEY}"

# The marker is written last, after every harness was checked: a half
# install (interrupted, out of disk) never counts as an install.
complete() {
  [ -f "$1/.complete" ] && [ -x "$1/$CLAUDE_REL" ] && [ -x "$1/$CODEX_REL" ] && [ -x "$1/$GEMINI_REL" ] \
    && [ -x "$1/$OPENCODE_REL" ]
}

print_paths() {
  printf 'DING_HARNESS_CLAUDE=%s\nDING_HARNESS_CODEX=%s\nDING_HARNESS_GEMINI=%s\nDING_HARNESS_OPENCODE=%s\n' \
    "$dir/$CLAUDE_REL" "$dir/$CODEX_REL" "$dir/$GEMINI_REL" "$dir/$OPENCODE_REL"
}

if complete "$dir"; then
  print_paths
  exit 0
fi
if [ "$check_only" = 1 ]; then
  echo "install-harnesses: the pinned harnesses are not installed in $dir; run scripts/install-harnesses.sh (or make harnesses)" >&2
  exit 1
fi

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "install-harnesses: only Linux x86_64 is pinned, this is $(uname -s)-$(uname -m)" >&2
  exit 1
fi
command -v npm >/dev/null 2>&1 || {
  echo "install-harnesses: npm is needed (Node 20 or newer)" >&2
  exit 1
}

# Install beside the final directory, then rename it into place: a reader
# sees no directory or a complete one, and two installs racing both end
# with the same complete directory.
parent="$(dirname "$dir")"
mkdir -p "$parent"
staging="$(mktemp -d "$parent/.installing.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
echo "install-harnesses: installing ${PACKAGES[*]} into $dir" >&2
printf '{"name":"st2-ding-harnesses","private":true}\n' >"$staging/package.json"
npm install --prefix "$staging" --ignore-scripts --save-exact --no-audit --no-fund \
  --no-package-lock --loglevel=error "${PACKAGES[@]}" >&2
for binary in "$CLAUDE_REL" "$CODEX_REL" "$GEMINI_REL" "$OPENCODE_REL"; do
  if [ ! -x "$staging/$binary" ]; then
    echo "install-harnesses: npm finished but $binary is missing" >&2
    exit 1
  fi
done
print_paths >"$staging/harnesses.env"
touch "$staging/.complete"
if ! mv -T "$staging" "$dir" 2>/dev/null; then
  # Someone else finished first, or something else is in the way: that is
  # never removed here, since DING_HARNESS_DIR may name any directory.
  if ! complete "$dir"; then
    echo "install-harnesses: $dir exists and is not a complete install; remove it and run again" >&2
    exit 1
  fi
fi
trap - EXIT
print_paths
