package policy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fixture is a home and a workspace in it, with the files the decision
// table and the file tests name.
type fixture struct {
	root, home, ws string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	// Not under /tmp: a sandboxed command's /tmp is private, so writing
	// there needs only workspace-write.
	dir, err := os.MkdirTemp("/var/tmp", "cordon-policy-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{root: root, home: filepath.Join(root, "home"), ws: filepath.Join(root, "home", "proj")}
	files := map[string]string{
		"home/notes.txt":                  "notes\n",
		"home/.ssh/id_ed25519":            "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		"home/.bashrc":                    "# rc\n",
		"home/other/x.txt":                "x\n",
		"home/proj/README.md":             "# proj\n",
		"home/proj/src/main.go":           "package main\n",
		"home/proj/docs/guide.md":         "guide\n",
		"home/proj/migrations/001.sql":    "create table x();\n",
		"home/proj/package.json":          "{}\n",
		"home/proj/.env":                  "SECRET=1\n",
		"home/proj/.git/hooks/pre-commit": "#!/bin/sh\n",
		"home/proj/.git/config":           "[core]\n",
		"home/proj/logo.png":              "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
	}
	for rel, content := range files {
		p := filepath.Join(root, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	big, err := os.Create(filepath.Join(f.ws, "big.log"))
	must(t, err)
	must(t, big.Truncate(MaxFileSize+1))
	must(t, big.Close())
	must(t, os.Symlink("/etc", filepath.Join(f.ws, "link-etc")))
	must(t, os.Symlink(filepath.Join(f.home, ".ssh", "id_ed25519"), filepath.Join(f.ws, "link-key")))
	must(t, os.Symlink(filepath.Join(f.home, "other"), filepath.Join(f.ws, "link-other")))
	must(t, os.Symlink("src", filepath.Join(f.ws, "link-src")))
	must(t, syscall.Mkfifo(filepath.Join(f.ws, "fifo"), 0o644))
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// load loads a policy for the fixture from one settings file written in
// the workspace (so "/x" in it is WORKSPACE/x), with nothing discovered.
func (f *fixture) load(t *testing.T, name, settings string) *Policy {
	t.Helper()
	file := filepath.Join(f.ws, ".policy-"+name+".json")
	must(t, os.WriteFile(file, []byte(settings), 0o644))
	p, err := Load(LoadOptions{Workspace: f.ws, Cwd: f.ws, Home: f.home, Settings: []string{file}, NoDiscovery: true, ManagedFiles: []string{}})
	if err != nil {
		t.Fatalf("policy %s: %v", name, err)
	}
	return p
}

type decisionCase struct {
	line      int
	policy    string
	mode      string
	verdict   Verdict
	level     Mode
	sandbox   string // sb, out, -
	tool      string
	disable   bool
	input     string
	reasonHas []string
}

// loadDecisions reads testdata/decisions.txt.
func loadDecisions(t *testing.T) (cases []decisionCase, policies map[string]string) {
	t.Helper()
	file, err := os.Open("testdata/decisions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	policies = map[string]string{}
	var cur, mode string
	var inSettings bool
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if inSettings {
			if line == "@end" {
				inSettings = false
				continue
			}
			policies[cur] += line + "\n"
			continue
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "@policy "); ok {
			cur, mode, inSettings = strings.TrimSpace(rest), "", true
			continue
		}
		if rest, ok := strings.CutPrefix(line, "@mode "); ok {
			mode = strings.TrimSpace(rest)
			continue
		}
		parts := strings.Split(line, " ## ")
		fields := strings.Fields(parts[0])
		if len(fields) < 4 {
			t.Fatalf("decisions.txt:%d: want DECISION LEVEL SANDBOX TOOL [INPUT]", n)
		}
		tc := decisionCase{line: n, policy: cur, mode: mode, verdict: Verdict(fields[0]), sandbox: fields[2], tool: fields[3], reasonHas: parts[1:]}
		switch fields[1] {
		case "RO":
			tc.level = ReadOnly
		case "WW":
			tc.level = WorkspaceWrite
		case "DF":
			tc.level = DangerFullAccess
		default:
			t.Fatalf("decisions.txt:%d: level %q", n, fields[1])
		}
		if tool, ok := strings.CutSuffix(tc.tool, "!"); ok {
			tc.tool, tc.disable = tool, true
		}
		// The input is the rest of the line after the fourth field.
		rest := parts[0]
		for range 4 {
			rest = strings.TrimLeft(rest, " \t")
			rest = rest[strings.IndexAny(rest+" ", " \t"):]
		}
		tc.input = strings.TrimSpace(rest)
		if q, ok := strings.CutPrefix(tc.input, "q:"); ok {
			if tc.input, err = strconv.Unquote(q); err != nil {
				t.Fatalf("decisions.txt:%d: %v", n, err)
			}
		}
		cases = append(cases, tc)
	}
	return cases, policies
}

// TestDecisionTable runs the public decision table, testdata/decisions.txt.
func TestDecisionTable(t *testing.T) {
	f := newFixture(t)
	cases, settings := loadDecisions(t)
	if len(cases) < 200 {
		t.Errorf("the table has %d cases; it must keep at least 200", len(cases))
	}
	pols := map[string]*Policy{}
	for name, s := range settings {
		pols[name] = f.load(t, name, s)
	}
	for _, tc := range cases {
		p := pols[tc.policy]
		req := Request{Tool: tc.tool, Cwd: f.ws, Mode: tc.mode, DisableSandbox: tc.disable}
		switch kindOf(tc.tool) {
		case kindBash:
			req.Command = tc.input
		case kindRead, kindWrite:
			req.Path = tc.input
		case kindWeb:
			req.URL = tc.input
		default:
			if tc.tool == "Monitor" {
				req.Command = tc.input
			} else if tc.tool == "LSP" {
				req.Path = tc.input
			} else if tc.input != "" {
				req.Input = json.RawMessage(tc.input)
			}
		}
		d, err := p.Authorize(context.Background(), req)
		if err != nil {
			t.Errorf("decisions.txt:%d: %s %q: %v", tc.line, tc.tool, tc.input, err)
			continue
		}
		sb := "-"
		if tc.tool == "Bash" || tc.tool == "Monitor" && tc.input != "" {
			sb = map[bool]string{true: "sb", false: "out"}[d.Sandboxed]
		}
		bad := d.Verdict != tc.verdict || d.Required != tc.level || sb != tc.sandbox
		for _, s := range tc.reasonHas {
			if !strings.Contains(d.Reason, s) {
				bad = true
			}
		}
		if bad {
			t.Errorf("decisions.txt:%d: [%s %s] %s %q:\n got  %s %s %s: %s\n want %s %s %s ## %s\n trace: %v",
				tc.line, tc.policy, tc.mode, tc.tool, tc.input,
				d.Verdict, short(d.Required), sb, d.Reason,
				tc.verdict, short(tc.level), tc.sandbox, strings.Join(tc.reasonHas, " ## "), d.Trace)
		}
		if len(d.Trace) == 0 || !strings.HasPrefix(d.Trace[len(d.Trace)-1].Result, string(d.Verdict)+": ") {
			t.Errorf("decisions.txt:%d: the trace does not end with the decision: %v", tc.line, d.Trace)
		}
	}
}

func short(m Mode) string {
	return map[Mode]string{ReadOnly: "RO", WorkspaceWrite: "WW", DangerFullAccess: "DF"}[m]
}

func TestDecisionErr(t *testing.T) {
	f := newFixture(t)
	p := f.load(t, "err", `{"permissions": {"deny": ["Bash(curl:*)"]}}`)
	d, _ := p.Authorize(context.Background(), Request{Tool: "Bash", Command: "ls && curl x"})
	var de *DeniedError
	if err := d.Err(); !errors.As(err, &de) || de.Rule != "Bash(curl:*)" || !strings.Contains(de.Reason, "curl x") {
		t.Errorf("Err() = %#v", d.Err())
	}
	d, _ = p.Authorize(context.Background(), Request{Tool: "Bash", Command: "ls"})
	if d.Err() != nil {
		t.Errorf("an allow: Err() = %v", d.Err())
	}
	if _, err := p.Authorize(context.Background(), Request{Tool: "Bash", Command: "ls", Mode: "sideways"}); err == nil {
		t.Error("an unknown mode: no error")
	}
	if _, err := p.Authorize(context.Background(), Request{Tool: "not a tool"}); err == nil {
		t.Error("a bad tool name: no error")
	}
}

// TestParamRules: Claude Code's deny and ask rules on a built-in tool's
// input parameters, Tool(param:value) with * for any text, decide the
// calls whose input has that value; a rule on a tool's main field
// (Bash(command:...)) is skipped, as Claude Code skips it.
func TestParamRules(t *testing.T) {
	f := newFixture(t)
	p := f.load(t, "params", `{"permissions": {
		"deny": ["Bash(run_in_background:true)", "WebFetch(prompt:*password*)", "Edit(new_string:*PRIVATE KEY*)", "Read(pages:*)", "Bash(command:ls *)"],
		"ask": ["Bash(dangerouslyDisableSandbox:true)", "Grep(output_mode: content)", "Bash(timeout:600000)"],
		"allow": ["WebFetch(domain:example.com)"]}}`)
	tests := []struct {
		name string
		req  Request
		want Verdict
		has  string
	}{
		{"background", Request{Tool: "Bash", Command: "npm run dev", Input: json.RawMessage(`{"command":"npm run dev","run_in_background":true}`)}, VerdictDeny, "Bash(run_in_background:true)"},
		{"foreground", Request{Tool: "Bash", Command: "npm run dev", Input: json.RawMessage(`{"command":"npm run dev","run_in_background":false}`)}, VerdictAllow, ""},
		{"a number", Request{Tool: "Bash", Command: "make", Input: json.RawMessage(`{"command":"make","timeout":600000}`)}, VerdictAsk, "Bash(timeout:600000)"},
		{"dangerouslyDisableSandbox", Request{Tool: "Bash", Command: "ls", DisableSandbox: true}, VerdictAsk, "Bash(dangerouslyDisableSandbox:true)"},
		{"the command field is not matched", Request{Tool: "Bash", Command: "ls -la"}, VerdictAllow, ""},
		{"fetch prompt", Request{Tool: "WebFetch", URL: "https://example.com/", Input: json.RawMessage(`{"url":"https://example.com/","prompt":"find the password"}`)}, VerdictDeny, "WebFetch(prompt:*password*)"},
		{"fetch other prompt", Request{Tool: "WebFetch", URL: "https://example.com/", Input: json.RawMessage(`{"url":"https://example.com/","prompt":"summarise"}`)}, VerdictAllow, ""},
		{"edit content", Request{Tool: "Edit", Path: "src/main.go", Mode: "acceptEdits", Input: json.RawMessage(`{"file_path":"src/main.go","old_string":"a","new_string":"-----BEGIN PRIVATE KEY-----"}`)}, VerdictDeny, "Edit(new_string:*PRIVATE KEY*)"},
		{"edit other content", Request{Tool: "Edit", Path: "src/main.go", Mode: "acceptEdits", Input: json.RawMessage(`{"file_path":"src/main.go","old_string":"a","new_string":"b"}`)}, VerdictAllow, ""},
		{"read pages", Request{Tool: "Read", Path: "README.md", Input: json.RawMessage(`{"file_path":"README.md","pages":"1-2"}`)}, VerdictDeny, "Read(pages:*)"},
		{"read whole", Request{Tool: "Read", Path: "README.md", Input: json.RawMessage(`{"file_path":"README.md"}`)}, VerdictAllow, ""},
		{"grep content", Request{Tool: "Grep", Path: "src", Input: json.RawMessage(`{"pattern":"x","path":"src","output_mode":"content"}`)}, VerdictAsk, "Grep(output_mode: content)"},
		{"grep files", Request{Tool: "Grep", Path: "src", Input: json.RawMessage(`{"pattern":"x","path":"src"}`)}, VerdictAllow, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Cwd = f.ws
			d, err := p.Authorize(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if d.Verdict != tc.want || !strings.Contains(d.Reason, tc.has) {
				t.Errorf("%s (%s), want %s with %q", d.Verdict, d.Reason, tc.want, tc.has)
			}
		})
	}
}
