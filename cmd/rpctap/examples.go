package main

import "github.com/spf13/cobra"

// examples are the Example texts of commands that do not set their own,
// by command path, so that every command's --help (and man page) shows
// how it is typed. TestEveryCommandsHelpHasAnExample keeps it complete.
var examples = map[string]string{
	"rpctap": `  rpctap demo
  rpctap run -- npx -y @modelcontextprotocol/server-everything stdio
  rpctap wrap claude-desktop everything
  rpctap ui`,
	"rpctap run": `  rpctap run -- npx -y @modelcontextprotocol/server-everything stdio
  rpctap run --name gopls --framing lsp -- gopls serve
  rpctap run --record /tmp/s.jsonl --method-timeout tools/call=2m -- ./my-server`,
	"rpctap http": `  rpctap http --target http://127.0.0.1:3001/mcp
  rpctap http --target https://mcp.example.com/mcp --listen 127.0.0.1:8808 --record /tmp/remote.jsonl`,
	"rpctap watch": `  rpctap watch -- ./my-server --stdio
  rpctap watch --host 'npx @modelcontextprotocol/inspector --cli --method tools/list' -- my-server`,
	"rpctap ui": `  rpctap ui
  rpctap ui server-everything
  rpctap ui ~/.local/state/rpctap/sessions/20261129T184200.123Z-server-everything.jsonl`,
	"rpctap ls": `  rpctap ls
  rpctap ls --recent 50
  rpctap ls --json | jq '.live[].name'`,
	"rpctap tail": `  rpctap tail
  rpctap tail -f session.jsonl --filter 'method:tools/* !dir:err'
  rpctap tail --json gopls | jq .method`,
	"rpctap check": `  rpctap check session.jsonl
  rpctap check --fail-on warn --json session.jsonl
  rpctap check --format sarif session.jsonl > rpctap.sarif
  rpctap check --format junit --fail-on warn session.jsonl > rpctap-junit.xml
  rpctap check --profile mcp --method-timeout tools/call=2m - < session.jsonl`,
	"rpctap sessions": `  rpctap sessions ls
  rpctap sessions prune --older-than 30d --dry-run`,
	"rpctap sessions ls": `  rpctap sessions ls
  rpctap sessions ls --json | jq -r '.[].path'`,
	"rpctap sessions rm": `  rpctap sessions rm ~/.local/state/rpctap/sessions/20261201T101500.000Z-everything.jsonl`,
	"rpctap sessions prune": `  rpctap sessions prune --older-than 2w --dry-run
  rpctap sessions prune --older-than 30d --yes`,
	"rpctap export": `  rpctap export session.jsonl --format html -o session.html
  rpctap export session.jsonl --format markdown > session.md
  rpctap export session.jsonl --format mermaid --max-frames 100
  rpctap export session.jsonl --format har -o session.har
  rpctap export session.jsonl --format otlp -o spans.json`,
	"rpctap replay": `  rpctap replay --as-server session.jsonl
  rpctap replay --as-server session.jsonl --unmatched forward -- npx -y @modelcontextprotocol/server-everything stdio
  rpctap replay --as-host session.jsonl --exit-code -- ./my-server
  rpctap replay --as-host session.jsonl --ignore '/result/contents/*/text' --json -- ./my-server`,
	"rpctap diff": `  rpctap diff before.jsonl after.jsonl
  rpctap diff before.jsonl after.jsonl --exit-code --duration-ratio 2
  rpctap diff before.jsonl after.jsonl --json | jq .`,
	"rpctap baseline": `  rpctap baseline accept trusted.jsonl
  rpctap check --fail-on error,drift new.jsonl
  rpctap baseline show new.jsonl`,
	"rpctap baseline accept": `  rpctap baseline accept trusted.jsonl
  rpctap baseline accept --server my-server trusted.jsonl`,
	"rpctap baseline show": `  rpctap baseline show
  rpctap baseline show mcp-servers/everything
  rpctap baseline show new.jsonl --json`,
	"rpctap baseline reset": `  rpctap baseline reset mcp-servers/everything
  rpctap baseline reset trusted.jsonl`,
	"rpctap classify": `  echo '{"jsonrpc":"2.0","id":null,"method":"ping"}' | rpctap classify --profile mcp
  rpctap classify --framing lsp --dir s2h < frames.bin`,
	"rpctap inject": `  rpctap inject '{"jsonrpc":"2.0","id":"x","method":"ping"}' --capture
  rpctap inject --catalog null-id-request
  rpctap inject --tap gopls --method textDocument/hover --capture --json
  rpctap inject --method tools/call --tool echo --arg message=hi --capture`,
	"rpctap catalog": `  rpctap catalog
  rpctap catalog --json | jq '.[].name'`,
	"rpctap completion": `  source <(rpctap completion bash)
  rpctap completion zsh > "${fpath[1]}/_rpctap"
  rpctap completion fish > ~/.config/fish/completions/rpctap.fish
  rpctap completion powershell | Out-String | Invoke-Expression`,
	"rpctap completion bash":       `  source <(rpctap completion bash)`,
	"rpctap completion zsh":        `  rpctap completion zsh > "${fpath[1]}/_rpctap"`,
	"rpctap completion fish":       `  rpctap completion fish > ~/.config/fish/completions/rpctap.fish`,
	"rpctap completion powershell": `  rpctap completion powershell | Out-String | Invoke-Expression`,
	"rpctap help":                  `  rpctap help wrap`,
}

// addExamples fills in the Example of each command under root that has
// none, from examples.
func addExamples(root *cobra.Command) {
	if root.Example == "" {
		root.Example = examples[root.CommandPath()]
	}
	for _, c := range root.Commands() {
		addExamples(c)
	}
}
