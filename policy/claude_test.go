package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/policy/shell"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// hookCordon is the cordon path the golden answers name.
const hookCordon = "/usr/local/bin/cordon"

// TestClaudeHookPayloads answers the PreToolUse payloads of
// testdata/claude/*.json, written as Claude Code sends them, under the
// policy of testdata/claude/settings.json, and compares the answers with
// the golden files. $WS and $HOME stand for the fixture's workspace and
// home.
func TestClaudeHookPayloads(t *testing.T) {
	f := newFixture(t)
	settings, err := os.ReadFile("testdata/claude/settings.json")
	must(t, err)
	p := f.load(t, "claude-hook", string(settings))
	files, _ := filepath.Glob("testdata/claude/*.json")
	n := 0
	for _, file := range files {
		if filepath.Base(file) == "settings.json" {
			continue
		}
		n++
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			must(t, err)
			raw = []byte(strings.NewReplacer("$WS", f.ws, "$HOME", f.home).Replace(string(raw)))
			in, err := ParseClaudeHook(raw)
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.AnswerClaude(context.Background(), in, "/", "", RunCommand{Cordon: hookCordon, Flags: []string{"--workspace", f.ws}})
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			if out != nil {
				var b bytes.Buffer
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				must(t, enc.Encode(out))
				got = b.Bytes()
				checkUpdatedInput(t, raw, out, f.ws)
			}
			got = []byte(strings.NewReplacer(f.ws, "$WS", f.home, "$HOME").Replace(string(got)))
			golden := strings.TrimSuffix(file, ".json") + ".golden"
			if *update {
				must(t, os.WriteFile(golden, got, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			must(t, err)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
	if n < 20 {
		t.Errorf("only %d payloads", n)
	}
}

// checkUpdatedInput: every member of tool_input comes back as it was, but
// command, which runs the original under cordon run, byte for byte.
func checkUpdatedInput(t *testing.T, raw []byte, out *ClaudeHookOutput, ws string) {
	t.Helper()
	var in struct {
		ToolName  string                     `json:"tool_name"`
		ToolInput map[string]json.RawMessage `json:"tool_input"`
	}
	must(t, json.Unmarshal(raw, &in))
	upd := out.HookSpecificOutput.UpdatedInput
	if d := out.HookSpecificOutput.Decision; d != nil {
		upd = d.UpdatedInput
	}
	if len(upd) == 0 {
		return
	}
	if in.ToolName != "Bash" && in.ToolName != "Monitor" {
		t.Fatalf("updatedInput for %s", in.ToolName)
	}
	var got map[string]json.RawMessage
	must(t, json.Unmarshal(upd, &got))
	if len(got) != len(in.ToolInput) {
		t.Errorf("updatedInput has %d members, tool_input %d", len(got), len(in.ToolInput))
	}
	for k, v := range in.ToolInput {
		if k == "command" {
			continue
		}
		if !bytes.Equal(compact(t, v), compact(t, got[k])) {
			t.Errorf("updatedInput.%s = %s, want %s", k, got[k], v)
		}
	}
	var orig, wrapped string
	must(t, json.Unmarshal(in.ToolInput["command"], &orig))
	must(t, json.Unmarshal(got["command"], &wrapped))
	// A foreground Bash call's directory carries over (WrapCwd).
	wantCwd := in.ToolName == "Bash" && string(in.ToolInput["run_in_background"]) != "true"
	inner, cwd := strings.CutPrefix(wrapped, cwdPrefix)
	if cwd {
		inner, cwd = strings.CutSuffix(inner, cwdSuffix)
	}
	if cwd != wantCwd {
		t.Errorf("the rewritten command carries the directory over: %v, want %v: %q", cwd, wantCwd, wrapped)
	}
	argv := wrappedArgv(t, inner)
	if i := slices.Index(argv, "--"); i < 0 || argv[0] != hookCordon || argv[1] != "run" || !slices.Contains(argv[:i], "--workspace") ||
		!slices.Equal(argv[i:], []string{"--", "bash", "-c", orig}) || slices.Contains(argv[:i], "--cwd-fd") != cwd {
		t.Errorf("the rewritten command runs %q, want cordon run --workspace %s ... -- bash -c %q", argv, ws, orig)
	}
}

// The text around cordon run in a rewritten command whose directory
// carries over (WrapCwd).
const (
	cwdPrefix = "{ cordon_cwd=$("
	cwdSuffix = ` 3>&1 >&4 4>&-) && { \builtin cd -- "${cordon_cwd:-.}" 2>/dev/null || :; }; } 4>&1`
)

func compact(t *testing.T, v json.RawMessage) []byte {
	var b bytes.Buffer
	must(t, json.Compact(&b, v))
	return b.Bytes()
}

// wrappedArgv parses a rewritten command: it must be one simple command,
// known now, and its words are returned.
func wrappedArgv(t testing.TB, wrapped string) []string {
	t.Helper()
	s, err := shell.Parse(wrapped)
	if err != nil {
		t.Fatalf("the rewritten command does not parse: %v\n%s", err, wrapped)
	}
	if len(s.Commands) != 1 {
		t.Fatalf("the rewritten command is %d commands, want one: %q", len(s.Commands), wrapped)
	}
	c := s.Commands[0]
	if c.Dynamic != "" || len(c.Redirects) > 0 || len(c.Assigns) > 0 || len(c.Wrappers) > 0 || c.Name.Dynamic {
		t.Fatalf("the rewritten command is not plain words: %+v", c)
	}
	for _, a := range c.Args {
		if a.Dynamic {
			t.Fatalf("a word of the rewritten command is dynamic: %q", a.Value)
		}
	}
	return c.Argv()
}

func TestParseClaudeHookMalformed(t *testing.T) {
	ok := `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/w","tool_input":{"command":"ls"}}`
	if _, err := ParseClaudeHook([]byte(ok)); err != nil {
		t.Fatalf("a good payload: %v", err)
	}
	for _, tc := range []struct{ name, in, err string }{
		{"not JSON", `hello`, "invalid character"},
		{"not an object", `[1]`, "cannot unmarshal"},
		{"not UTF-8", "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls \xff\"}}", "not UTF-8"},
		{"no tool_name", `{"tool_input":{}}`, "no tool_name"},
		{"no tool_input", `{"tool_name":"Read"}`, "no tool_input"},
		{"tool_input not an object", `{"tool_name":"Read","tool_input":"x"}`, "not an object"},
		{"a member twice", `{"tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf ~"}}`, `"command" is named twice`},
		{"Bash without command", `{"tool_name":"Bash","tool_input":{"description":"x"}}`, "no command"},
		{"command not a string", `{"tool_name":"Bash","tool_input":{"command":["ls"]}}`, "not a string"},
		{"NUL", `{"tool_name":"Bash","tool_input":{"command":"ls\u0000rm"}}`, "NUL"},
		{"lone high surrogate", `{"tool_name":"Bash","tool_input":{"command":"echo \ud800"}}`, "surrogate"},
		{"lone low surrogate", `{"tool_name":"Bash","tool_input":{"command":"echo \udc00x"}}`, "surrogate"},
		{"reversed pair", `{"tool_name":"Bash","tool_input":{"command":"\udc00\ud800"}}`, "surrogate"},
		{"another event", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "answers PreToolUse"},
		{"relative cwd", `{"tool_name":"Bash","cwd":"proj","tool_input":{"command":"ls"}}`, "not an absolute path"},
	} {
		_, err := ParseClaudeHook([]byte(tc.in))
		if !errors.Is(err, ErrHookInput) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want ErrHookInput with %q", tc.name, err, tc.err)
		}
	}
	// A real pair is text.
	in, err := ParseClaudeHook([]byte(`{"tool_name":"Bash","tool_input":{"command":"echo \ud83d\ude00 \\ud800"}}`))
	if err != nil {
		t.Fatalf("a surrogate pair: %v", err)
	}
	req, err := in.Request("/w")
	if err != nil || req.Command != "echo \U0001F600 \\ud800" {
		t.Errorf("command %q, %v", req.Command, err)
	}
	// A field of the wrong type inside a known tool's input.
	for _, bad := range []string{
		`{"tool_name":"Bash","tool_input":{"command":"ls","dangerouslyDisableSandbox":"yes"}}`,
		`{"tool_name":"Read","tool_input":{"file_path":7}}`,
		`{"tool_name":"Read","tool_input":{}}`,
		`{"tool_name":"WebFetch","tool_input":{"prompt":"x"}}`,
	} {
		in, err := ParseClaudeHook([]byte(bad))
		if err == nil {
			_, err = in.Request("/w")
		}
		if !errors.Is(err, ErrHookInput) {
			t.Errorf("%s: %v, want ErrHookInput", bad, err)
		}
	}
}

// wrapSeeds are commands that are hard to quote.
var wrapSeeds = []string{
	"", "ls", "'", "''", `'\''`, `"`, `\`, `\\'`, "a'b\"c\\d", "$HOME $(id) `id` ${x:-y}", "!!", "!x", "\n", "a\nb\r\nc",
	"echo \"it's\"", "\t", "*", "~", "~root", "-c", "--", "#", "x # y", ";", "&&", "|", "<<EOF\nx\nEOF", "h\u00e9llo \u4e16\u754c \U0001F600",
	"\x01\x02\x1b[31m", "\u0080", "a\u0081b", "ls \r# ; x", "\u00a0", "\u2028", "'$'\\x27''", "$'\\''", "a=b", "{a,b}", "[[ x ]]", "%s %n", "\x7f", " leading and trailing ", "-x", "--help", "+O",
}

// FuzzWrap: for any text, the rewritten command is one simple command
// `cordon run FLAGS -- bash -c X` whose X is the text byte for byte; a NUL
// or text that is not UTF-8 is refused.
func FuzzWrap(f *testing.F) {
	for _, s := range wrapSeeds {
		f.Add(s, "/ws dir/it's")
	}
	f.Fuzz(func(t *testing.T, cmd, ws string) {
		rc := RunCommand{Cordon: "/opt/cor don/cordon", Flags: []string{"--workspace", ws, "--mode", "default"}}
		w, err := rc.Wrap(cmd)
		bad := strings.ContainsRune(cmd+ws, 0) || !utf8.ValidString(cmd) || !utf8.ValidString(ws)
		if bad {
			if err == nil {
				t.Fatalf("%q: accepted", cmd)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		if _, err := shell.Parse(w); errors.Is(err, shell.ErrTooLarge) || errors.Is(err, shell.ErrTooComplex) {
			return
		}
		// mvdan.cc/sh misreads these (see parseBash); TestWrapRealBash
		// shows bash does not.
		if strings.ContainsAny(cmd+ws, "\u0080\u0081\r") {
			return
		}
		argv := wrappedArgv(t, w)
		// mvdan.cc/sh reads "\r\n" as "\n", even between single quotes
		// (bash does not: TestWrapRealBash shows the bytes bash hands on).
		crlf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
		want := []string{"/opt/cor don/cordon", "run", "--workspace", crlf(ws), "--mode", "default", "--", "bash", "-c"}
		if optionLike(cmd) {
			want = append(want, "--")
		}
		want = append(want, crlf(cmd))
		if !slices.Equal(argv, want) {
			t.Fatalf("%q wraps into %q, which runs %q", cmd, w, argv)
		}
	})
}

// TestWrapRealBash runs rewritten commands with bash, cordon replaced by
// a program that prints its arguments: bash hands the original over, byte
// for byte.
func TestWrapRealBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dump := script(t, `for a in "$@"; do printf '%s\0' "$a"; done`)
	for _, cmd := range wrapSeeds {
		rc := RunCommand{Cordon: dump, Flags: []string{"--workspace", "/w s/'x'"}}
		w, err := rc.Wrap(cmd)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bash, "-c", w).Output()
		if err != nil {
			t.Fatalf("%q: %v", w, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		want := []string{"run", "--workspace", "/w s/'x'", "--", "bash", "-c"}
		if optionLike(cmd) {
			want = append(want, "--")
		}
		want = append(want, cmd)
		if !slices.Equal(got, want) {
			t.Errorf("bash -c %q passed %q, want %q", w, got, want)
		}
	}
}

// TestWrapCwdRealBash runs a rewritten command as Claude Code runs a Bash
// call in its own shell (eval, then pwd -P when it succeeds), cordon
// replaced by a program that writes a directory on its --cwd-fd and exits
// with a status: the shell ends in that directory when the status is 0
// and the directory is there, where it was otherwise; the status and the
// output are the command's, and the shell's own descriptors 3 and 4 are
// left as they were.
func TestWrapCwdRealBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	fake := script(t, `[ "$1 $2 $3" = "run --cwd-fd 3" ] || exit 99
printf 'out\n'; printf 'err\n' >&2
printf '%s' "$FAKE_DIR" >&3
exit "$FAKE_STATUS"`)
	start, there := t.TempDir(), t.TempDir()
	w, err := (RunCommand{Cordon: fake, Flags: []string{"--workspace", start}}).WrapCwd("ignored")
	must(t, err)
	for _, tc := range []struct {
		name, dir, status string
		wantDir, wantOut  string
	}{
		{"moved", there, "0", there, "0"},
		{"failed", there, "3", start, "3"},
		{"nothing said", "", "0", start, "0"},
		{"not there", filepath.Join(there, "gone"), "0", start, "0"},
		{"signal", there, "130", start, "130"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Claude Code's wrapper, with descriptors 3 and 4 of its own.
			script := `exec 3>/dev/null 4>/dev/null; eval ` + singleQuote(w) + ` < /dev/null; s=$?; ` +
				`printf 'status=%s pwd=%s\n' "$s" "$(pwd -P)"; ls -l /proc/$$/fd/3 /proc/$$/fd/4 | grep -c /dev/null`
			cmd := exec.Command(bash, "-c", script)
			cmd.Dir = start
			cmd.Env = append(os.Environ(), "FAKE_DIR="+tc.dir, "FAKE_STATUS="+tc.status)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, stderr.Bytes())
			}
			want := "out\nstatus=" + tc.wantOut + " pwd=" + tc.wantDir + "\n2\n"
			if string(out) != want || stderr.String() != "err\n" {
				t.Errorf("stdout %q, stderr %q; want %q, %q", out, stderr.Bytes(), want, "err\n")
			}
		})
	}
}

// TestWrapOptionLike: a command that starts like an option runs as a
// command, as bash -c '-x' would not (bash takes it for its option -x and
// runs nothing).
func TestWrapOptionLike(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	// cordon replaced by a program that runs what follows its --
	run := script(t, `while [ "$1" != -- ]; do shift; done; shift; exec "$@"`)
	for _, cmd := range []string{"-x", "--help", "+O", "-c"} {
		w, err := (RunCommand{Cordon: run}).Wrap(cmd)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bash, "-c", w).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 127 || !strings.Contains(string(out), "command not found") {
			t.Errorf("%q: %q ran %v: %s, want the command run (command not found)", cmd, w, err, out)
		}
	}
}

func TestWrapRefuses(t *testing.T) {
	for _, cmd := range []string{"ls\x00", "\xff", "a\xc3"} {
		if _, err := (RunCommand{Cordon: "/c"}).Wrap(cmd); err == nil {
			t.Errorf("%q: accepted", cmd)
		}
	}
	if _, err := (RunCommand{}).Wrap("ls"); err == nil {
		t.Error("no cordon path: accepted")
	}
}

// FuzzParseClaudeHook: no input panics; what parses turns into a request,
// and a Bash answer keeps every member of tool_input but command.
func FuzzParseClaudeHook(f *testing.F) {
	files, _ := filepath.Glob("testdata/claude/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"tool_name":"Bash","tool_input":{"command":"ls","x":{"y":[1,"\ud83d\ude00"]}}}`))
	f.Add([]byte(`{"tool_name":"Bash","tool_input":{"command":"a\ud800"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseClaudeHook(data)
		if err != nil {
			if !errors.Is(err, ErrHookInput) {
				t.Fatalf("an error that is not ErrHookInput: %v", err)
			}
			return
		}
		if _, err := in.Request("/"); err != nil && !errors.Is(err, ErrHookInput) {
			t.Fatalf("Request: %v", err)
		}
		if in.ToolName != "Bash" {
			return
		}
		out, err := in.Answer(Decision{Verdict: VerdictAllow, Sandboxed: true}, RunCommand{Cordon: "/c"})
		if err != nil {
			return // not UTF-8 text in command: refused
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out.HookSpecificOutput.UpdatedInput, &got); err != nil {
			t.Fatalf("updatedInput is not JSON: %v: %s", err, out.HookSpecificOutput.UpdatedInput)
		}
		if len(got) != len(in.ToolInput) {
			t.Fatalf("updatedInput has %d members, tool_input %d", len(got), len(in.ToolInput))
		}
	})
}

// TestAnswerClaudeSessionMode: the hook decides under the session's mode
// as Claude Code reports it in permission_mode, whatever the settings'
// mode: auto accepts the edits in the workspace and asks beyond it, as
// acceptEdits; manual is default; a mode cordon does not know falls back
// on the settings' mode, but never on more than Claude Code's default.
func TestAnswerClaudeSessionMode(t *testing.T) {
	f := newFixture(t)
	pols := map[string]*Policy{}
	for _, m := range []string{"bypassPermissions", "plan", "default", "auto"} {
		// outside the workspace, which is not trusted to widen the mode
		file := filepath.Join(f.root, m+".json")
		must(t, os.WriteFile(file, []byte(`{"permissions": {"defaultMode": "`+m+`"}}`), 0o644))
		p, err := Load(LoadOptions{Workspace: f.ws, Cwd: f.ws, Home: f.home, Settings: []string{file}, NoDiscovery: true, ManagedFiles: []string{}})
		must(t, err)
		pols[m] = p
	}
	edit := `"tool_name":"Edit","tool_input":{"file_path":"$WS/src/main.go","old_string":"main","new_string":"x"}`
	outside := `"tool_name":"Write","tool_input":{"file_path":"$HOME/other/x.txt","content":"x"}`
	fetch := `"tool_name":"WebFetch","tool_input":{"url":"https://example.com/","prompt":"x"}`
	for _, tc := range []struct {
		settings, session, call string
		want                    Verdict
	}{
		{"bypassPermissions", "bypassPermissions", fetch, VerdictAllow},
		{"bypassPermissions", "", fetch, VerdictAllow},
		{"bypassPermissions", "auto", fetch, VerdictAsk},
		{"bypassPermissions", "auto", outside, VerdictAsk},
		{"bypassPermissions", "auto", edit, VerdictAllow},
		{"bypassPermissions", "default", fetch, VerdictAsk},
		{"bypassPermissions", "manual", edit, VerdictAsk},
		{"bypassPermissions", "sideways", fetch, VerdictAsk},
		{"bypassPermissions", "sideways", edit, VerdictAsk},
		{"plan", "sideways", edit, VerdictDeny},
		{"plan", "auto", edit, VerdictAllow},
		{"default", "auto", edit, VerdictAllow},
		{"default", "manual", edit, VerdictAsk},
		{"default", "sideways", edit, VerdictAsk},
		{"auto", "", edit, VerdictAllow},
		{"auto", "", outside, VerdictAsk},
		{"auto", "plan", edit, VerdictDeny},
	} {
		t.Run(tc.settings+"/"+tc.session+"/"+tc.call[13:17], func(t *testing.T) {
			raw := `{"hook_event_name":"PreToolUse","cwd":"$WS","permission_mode":"` + tc.session + `",` + tc.call + `}`
			raw = strings.NewReplacer("$WS", f.ws, "$HOME", f.home).Replace(raw)
			in, err := ParseClaudeHook([]byte(raw))
			must(t, err)
			out, err := pols[tc.settings].AnswerClaude(context.Background(), in, "/", "", RunCommand{Cordon: hookCordon})
			must(t, err)
			if got := out.HookSpecificOutput.PermissionDecision; got != tc.want {
				t.Errorf("%s, want %s (%s)", got, tc.want, out.HookSpecificOutput.PermissionDecisionReason)
			}
		})
	}
}
