package shell

import "testing"

// benchCommands are what an agent typically runs, one per hook call.
var benchCommands = map[string]string{
	"simple":   "git status --short",
	"typical":  "cd /home/u/proj && npm run test -- --watch=false 2>&1 | tail -50",
	"compound": `find . -name '*.go' -not -path './vendor/*' | xargs grep -l "func main" | head -20 && go vet ./... && echo "done: $(date)"`,
	"nested":   `bash -c 'for f in $(git diff --name-only); do gofmt -l "$f"; done' && sudo -u build env CI=1 timeout 600 make -C build test > /tmp/test.log`,
}

// BenchmarkParseClassify measures what the Claude Code hook pays for the
// shell analysis of one Bash tool call: parse, classify, and the deny and
// allow rules of a typical settings file.
func BenchmarkParseClassify(b *testing.B) {
	var allow, deny Patterns
	for _, spec := range []string{"ls:*", "cat:*", "grep:*", "rg:*", "git status:*", "git diff:*", "git log:*",
		"npm run test:*", "npm run lint", "go test:*", "go vet:*", "make:*", "head:*", "tail:*", "find:*", "echo:*",
		"cd:*", "pwd", "wc:*", "sort:*"} {
		allow = append(allow, mustPattern(b, spec))
	}
	for _, spec := range []string{"curl:*", "wget:*", "rm -rf:*", "git push:*", "sudo:*", "ssh:*", "nc:*"} {
		deny = append(deny, mustPattern(b, spec))
	}
	for name, cmd := range benchCommands {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, _ := Parse(cmd)
				Classify(s, tableContext)
				deny.Match(s)
				allow.Allow(s)
			}
		})
	}
}
