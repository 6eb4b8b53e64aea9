#!/usr/bin/env bash
# Regenerate the real recordings in testdata/sessions/real/ (see README.md).
# Run .ci/peers first. Runs from the repository root so that the commands in
# the recordings' argv are repository-relative. Usage:
#   testdata/peers/record-sessions.sh [NAME...]    (default: all)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

P=testdata/peers
B=$P/bin
EVERYTHING=$P/node_modules/.bin/mcp-server-everything
INSPECTOR=$P/node_modules/.bin/inspector
OUT=testdata/sessions/real
mkdir -p "$OUT"

inspector() { # NAME INSPECTOR-ARGS...
  local name=$1; shift
  "$INSPECTOR" --cli "$@" -- "$B/record" -o "$OUT/$name.jsonl" -- "$EVERYTHING" stdio >/dev/null
}

record() {
  echo "recording $1" >&2
  case $1 in
  inspector-everything-tools-list)
    inspector "$1" --method tools/list ;;
  inspector-everything-tools-call)
    inspector "$1" --method tools/call --tool-name echo --tool-arg message=hi ;;
  inspector-everything-resources-list)
    inspector "$1" --method resources/list ;;
  inspector-everything-prompts-list)
    inspector "$1" --method prompts/list ;;
  gosdk-pair)
    "$B/client" -call 'echo={"message":"hi"}' -call 'add={"a":2,"b":3}' -call 'sleep={"duration":"250ms"}' \
      -- "$B/record" -o "$OUT/$1.jsonl" -- "$B/server" >/dev/null ;;
  gosdk-client-everything)
    "$B/client" -call 'echo={"message":"hi"}' -call 'get-sum={"a":2,"b":3}' \
      -- "$B/record" -o "$OUT/$1.jsonl" -- "$EVERYTHING" stdio >/dev/null ;;
  gopls)
    "$B/lspdrive" -dir /tmp/rpctap-gopls-demo \
      -- "$B/record" -framing lsp -o "$OUT/$1.jsonl" -- env GO_TELEMETRY_CHILD=2 "$B/gopls" serve >/dev/null ;;
  *)
    echo "unknown recording $1" >&2; return 2 ;;
  esac
}

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  names=(inspector-everything-tools-list inspector-everything-tools-call
         inspector-everything-resources-list inspector-everything-prompts-list
         gosdk-pair gosdk-client-everything gopls)
fi
for n in "${names[@]}"; do record "$n"; done
