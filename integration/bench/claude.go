package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cordon.dev/cordon/integration/claudecode"
	"cordon.dev/cordon/policy"
)

// claudeContender is one way Claude Code runs its Bash calls.
type claudeContender struct {
	name string
	// settings are Claude Code's user settings.
	settings map[string]any
	// allow passes --allowedTools Bash: no hook allows the calls.
	allow bool
	env   []string
	home  string
	// calls are the per-call times of every session: from the moment the
	// stand-in sent the tool_use to the moment the result came back.
	calls []time.Duration
	// cpu is the processor time of each session: Claude Code's and that
	// of every process it waited for (hooks, shells, cordon run, its own
	// sandbox's bubblewrap and socat), and for cordon serve, the daemon's
	// and its sandboxes'; faults their page faults.
	cpu    []time.Duration
	faults []int64
}

// claudeCommand is what every call of the bench's sessions runs: a quick
// command, so that the cost of the sandbox is what shows.
const claudeCommand = "echo hello"

// claudePartRuns is how many times each piece of a cordon call is timed
// alone, spread over the rounds of sessions.
const claudePartRuns = 60

// claudeThink is how long the stand-in takes before each answer, as a
// model does (seconds, in fact): cordon serve makes the next sandbox
// meanwhile, as it would, instead of on the next call's time.
const claudeThink = 250 * time.Millisecond

// The contenders' names, which the report refers to.
const (
	ccNone   = "no sandbox"
	ccNoop   = "a hook doing nothing"
	ccOwn    = "Claude Code's sandbox"
	ccCold   = "cordon (cold)"
	ccServed = "cordon (serve)"
)

// claudeBench measures what a Bash call costs where the user pays for it:
// in a Claude Code session (the real one, headless, against the stand-in
// for the Messages API), per call, with no sandbox, with a hook that does
// nothing (what any hook costs in Claude Code), with Claude Code's own
// sandbox (sandbox-runtime over bubblewrap) and with cordon's hook as
// cordon install claude writes it, cold (CORDON_SERVE=0: the hook and the
// run each a process of its own) and through cordon serve (the default:
// the hook answered and the command run by the daemon); sessions of calls
// each, rounds of them interleaved. It then
// takes a cordon call apart, outside Claude Code: the hook alone, and the
// command Claude Code's shell runs, plain and rewritten by cordon.
func claudeBench(cordon string, rounds, calls int) error {
	bin, err := claudecode.Install(claudecode.CacheDir())
	if err != nil {
		return fmt.Errorf("Claude Code: %w", err)
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "cordon-bench-claude-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ws := filepath.Join(work, "ws")
	root := filepath.Join(work, "state")
	for _, d := range []string{ws, root} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	hook := policy.ClaudeHookEntry(cordon)
	hooked := func(matcher, command string) map[string]any {
		return map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{
			"matcher": matcher, "hooks": []any{map[string]any{"type": "command", "command": command, "timeout": hook.Timeout}},
		}}}}
	}
	cs := []*claudeContender{
		{name: ccNone, settings: map[string]any{}, allow: true},
		{name: ccNoop, settings: hooked(hook.Matcher, truePath), allow: true},
		{name: ccOwn, settings: map[string]any{"sandbox": map[string]any{"enabled": true, "autoAllowBashIfSandboxed": true}}},
		{name: ccCold, settings: hooked(hook.Matcher, hook.Command), env: []string{"CORDON_SERVE=0"}},
		{name: ccServed, settings: hooked(hook.Matcher, hook.Command)},
	}
	if _, err := exec.LookPath("socat"); err != nil {
		fmt.Fprintln(os.Stderr, "bench: no socat (apt-get install socat): Claude Code's own sandbox not compared")
		cs = slices.DeleteFunc(cs, func(c *claudeContender) bool { return c.name == ccOwn })
	}
	for i, c := range cs {
		c.home = filepath.Join(work, "home-"+strconv.Itoa(i))
		data, _ := json.Marshal(c.settings)
		if err := writeFile(filepath.Join(c.home, ".claude", "settings.json"), data); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(c.home, "tmp"), 0o700); err != nil {
			return err
		}
		c.env = append(c.env, "CORDON_STATE_ROOT="+root, "TMPDIR="+filepath.Join(c.home, "tmp"))
	}
	cold, served := byName(cs, ccCold), byName(cs, ccServed)
	// The daemon the hook's first run would start, started here to read
	// its processor time and its pool's log: a sandbox per command, made
	// ahead (docs/performance.md).
	d, err := startDaemon(cordon, append(os.Environ(), "HOME="+served.home, "CORDON_STATE_ROOT="+root), root, 4)
	if err != nil {
		return fmt.Errorf("cordon serve: %w", err)
	}
	defer d.stop()

	script := make([]claudecode.Call, calls)
	for i := range script {
		script[i] = claudecode.Call{Tool: "Bash", Input: map[string]any{"command": claudeCommand, "description": "Say hello"}}
	}
	// A session of each first: Claude Code's first start in a home, the
	// page cache, cordon's probe.
	for _, c := range cs {
		if _, _, err := claudeSession(bin, ws, c, script[:2]); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	parts, measure, err := claudeParts(cordon, truePath, ws, cold, served)
	if err != nil {
		return err
	}
	if err := measure(3, false); err != nil {
		return err
	}
	for range rounds {
		// The pieces alone, in the same minutes as the sessions.
		if err := measure(max(1, claudePartRuns/rounds), true); err != nil {
			return err
		}
		for _, c := range cs {
			// What the daemon does for a session (its sandboxes, and
			// making the next ones) is the serve contender's: nothing
			// else uses it.
			cpu0, faults0 := procUsage(d.cmd.Process.Pid)
			rs, use, err := claudeSession(bin, ws, c, script)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			cpu, faults := use.cpu, use.faults
			if c == served {
				waitPoolFull(d, 4, 5*time.Second)
				cpu1, faults1 := procUsage(d.cmd.Process.Pid)
				cpu, faults = cpu+cpu1-cpu0, faults+faults1-faults0
			}
			c.cpu, c.faults = append(c.cpu, cpu), append(c.faults, faults)
			// The first call of a session pays for Claude Code's shell
			// snapshot: not what a call costs.
			for _, r := range rs[1:] {
				c.calls = append(c.calls, r.Got.Sub(r.Sent))
			}
		}
	}
	pool := d.stop()
	claudeReport(cs, parts, rounds, calls)
	fmt.Printf("  cordon serve's pool: %s\n", pool)
	return nil
}

func byName(cs []*claudeContender, name string) *claudeContender {
	for _, c := range cs {
		if c.name == name {
			return c
		}
	}
	return nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// usage is what a session's processes used.
type usage struct {
	cpu    time.Duration
	faults int64
}

// claudeSession runs one headless session of the script and returns each
// call's result, checking that each ran as the contender runs it, and the
// processor time and page faults of Claude Code and the processes it
// waited for.
func claudeSession(bin, ws string, c *claudeContender, script []claudecode.Call) ([]claudecode.Result, usage, error) {
	srv, err := claudecode.NewServer(script)
	if err != nil {
		return nil, usage{}, err
	}
	defer srv.Close()
	srv.Think = claudeThink
	args := claudecode.Args("Say hello.", "--permission-mode", "acceptEdits")
	if c.allow {
		args = append(args, "--allowedTools", "Bash")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = ws
	cmd.Env = append(claudecode.Env(c.home, srv.URL, os.Getenv("PATH")), c.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, usage{}, fmt.Errorf("claude: %v\n%s", err, out.Bytes())
	}
	rs := srv.Results()
	if len(rs) != len(script) {
		return nil, usage{}, fmt.Errorf("%d results for %d calls\n%s", len(rs), len(script), out.Bytes())
	}
	for _, r := range rs {
		if r.IsError || strings.TrimSpace(r.Text) != "hello" {
			return nil, usage{}, fmt.Errorf("a call's result: %q (is_error %v)", r.Text, r.IsError)
		}
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return rs, usage{cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), ru.Minflt + ru.Majflt}, nil
}

// procUsage is the processor time and page faults of a live process and
// of the children it waited for (/proc/PID/stat: minflt, cminflt, majflt,
// cmajflt, utime, stime, cutime, cstime).
func procUsage(pid int) (time.Duration, int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	s := string(data)
	fs := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	sum := func(is ...int) (n int64) {
		for _, i := range is {
			v, _ := strconv.ParseInt(fs[i], 10, 64)
			n += v
		}
		return n
	}
	// Fields 10-17 of proc(5), counted from the state (field 3).
	return time.Duration(sum(11, 12, 13, 14)) * time.Second / 100, sum(7, 8, 9, 10) // USER_HZ
}

// waitPoolFull waits, at most max, until the daemon has size sandboxes
// ready again: their inits, its children, wait for a command.
func waitPoolFull(d *daemon, size int, max time.Duration) {
	parent := "PPid:\t" + strconv.Itoa(d.cmd.Process.Pid) + "\n"
	for deadline := time.Now().Add(max); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ready := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			status, _ := os.ReadFile("/proc/" + e.Name() + "/status")
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if bytes.Contains(status, []byte(parent)) && bytes.Contains(cmdline, []byte("--command-fd=")) {
				ready++
			}
		}
		if ready >= size {
			return
		}
	}
}

// claudePart is one piece of a cordon call, timed alone.
type claudePart struct {
	name  string
	times []time.Duration
}

// The parts' names, which the report refers to.
const (
	partTrue       = "/bin/true, the payload on stdin"
	partHook       = "cordon hook claude, cold"
	partHookServe  = "cordon hook claude, served"
	partShell      = "the call's shell, plain"
	partShellCold  = "the call's shell, cordon's rewrite, cold"
	partShellServe = "the call's shell, cordon's rewrite, serve"
	partRunCold    = "cordon run, cold"
	partRunServe   = "cordon run, serve"
)

// claudeParts returns the pieces of a Bash call with cordon's hook,
// outside Claude Code, and measure, which times each of them n times,
// interleaved (kept with keep): the hook on the call's payload (against
// /bin/true reading it), the command Claude Code's shell runs (bash -c as
// Claude Code wraps it: eval, then pwd -P into a file), plain and
// rewritten by cordon, cold and through cordon serve, and the rewrite's
// cordon run alone.
func claudeParts(cordon, truePath, ws string, cold, served *claudeContender) (parts []*claudePart, measure func(n int, keep bool) error, err error) {
	payload, _ := json.Marshal(map[string]any{
		"session_id": "bench", "cwd": ws, "permission_mode": "acceptEdits", "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": claudeCommand, "description": "Say hello"}, "tool_use_id": "toolu_bench",
	})
	envOf := func(c *claudeContender) []string { return append(append(os.Environ(), "HOME="+c.home), c.env...) }
	answer := exec.Command(cordon, "hook", "claude")
	answer.Dir, answer.Stdin, answer.Env = ws, bytes.NewReader(payload), envOf(cold)
	data, err := answer.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("cordon hook claude: %w", err)
	}
	var a struct {
		HookSpecificOutput struct {
			UpdatedInput struct{ Command string } `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(data, &a); err != nil || a.HookSpecificOutput.UpdatedInput.Command == "" {
		return nil, nil, fmt.Errorf("cordon hook claude answered %s", data)
	}
	rewritten := a.HookSpecificOutput.UpdatedInput.Command
	cwdFile := filepath.Join(cold.home, "tmp", "cwd")
	shell := func(command string) []string {
		return []string{"bash", "-c", "eval " + policy.ShellQuote(command) + " < /dev/null && pwd -P >| " + cwdFile}
	}
	// The rewrite's cordon run, as the rewrite runs it, without the
	// descriptor for the directory it ends in.
	run := []string{cordon, "run", "--workspace", ws, "--session", "bench", "--serve", "--mode", "acceptEdits", "--", "bash", "-c", claudeCommand}
	type piece struct {
		part  *claudePart
		argv  []string
		stdin []byte
		env   []string
	}
	pieces := []piece{
		{&claudePart{name: partTrue}, []string{truePath}, payload, envOf(cold)},
		{&claudePart{name: partHook}, []string{cordon, "hook", "claude"}, payload, envOf(cold)},
		{&claudePart{name: partHookServe}, []string{cordon, "hook", "claude"}, payload, envOf(served)},
		{&claudePart{name: partShell}, shell(claudeCommand), nil, envOf(cold)},
		{&claudePart{name: partShellCold}, shell(rewritten), nil, envOf(cold)},
		{&claudePart{name: partShellServe}, shell(rewritten), nil, envOf(served)},
		{&claudePart{name: partRunCold}, run, nil, envOf(cold)},
		{&claudePart{name: partRunServe}, run, nil, envOf(served)},
	}
	measure = func(n int, keep bool) error {
		for range n {
			for _, p := range pieces {
				cmd := exec.Command(p.argv[0], p.argv[1:]...)
				cmd.Dir, cmd.Env, cmd.Stdin = ws, p.env, bytes.NewReader(p.stdin)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				start := time.Now()
				err := cmd.Run()
				d := time.Since(start)
				if err != nil {
					return fmt.Errorf("%s: %v\n%s", p.part.name, err, out.Bytes())
				}
				if keep {
					p.part.times = append(p.part.times, d)
				}
			}
		}
		return nil
	}
	for _, p := range pieces {
		parts = append(parts, p.part)
	}
	return parts, measure, nil
}

func claudeReport(cs []*claudeContender, parts []*claudePart, rounds, calls int) {
	fmt.Printf("\nA Bash call in Claude Code %s (headless, against a stand-in for the Messages API that takes %v to answer): %d sessions of %d calls of %q per contender, interleaved; per call, from the tool_use sent to its result back, the first call of each session left out; processor time and page faults per call: Claude Code's and every process it waited for, and for cordon (serve) the daemon's\n\n",
		claudecode.Version, claudeThink, rounds, calls, claudeCommand)
	base := byName(cs, ccNone)
	added := func(name string) time.Duration {
		c := byName(cs, name)
		if c == nil {
			return 0
		}
		return median(c.calls) - median(base.calls)
	}
	cpuPerCall := func(c *claudeContender) time.Duration { return median(c.cpu) / time.Duration(calls) }
	fmt.Printf("  %-22s %10s %10s %10s %16s %12s\n", "contender", "median", "p90", "added", "processor time", "page faults")
	for _, c := range cs {
		fmt.Printf("  %-22s %10s %10s %10s %16s %12d\n", c.name, ms(median(c.calls)), ms(percentile(c.calls, 0.9)),
			ms(added(c.name)), ms(cpuPerCall(c)), median(c.faults)/int64(calls))
	}
	fmt.Println()
	if own := byName(cs, ccOwn); own != nil {
		for _, g := range []struct {
			name string
			frac float64
		}{{ccServed, 0.25}, {ccCold, 0.5}} {
			verdict := "met"
			if float64(added(g.name)) > g.frac*float64(added(ccOwn)) {
				verdict = "NOT met"
			}
			fmt.Printf("  %s adds %s per call, Claude Code's sandbox %s: %.2fx (goal: at most %.2fx, %s)\n",
				g.name, ms(added(g.name)), ms(added(ccOwn)), float64(added(g.name))/float64(added(ccOwn)), g.frac, verdict)
		}
	}
	part := func(name string) time.Duration {
		for _, p := range parts {
			if p.name == name {
				return median(p.times)
			}
		}
		return 0
	}
	fmt.Printf("\nThe pieces of a cordon call, alone (medians of %d runs each, interleaved, between the rounds of sessions):\n\n", len(parts[0].times))
	for _, p := range parts {
		fmt.Printf("  %-42s median %s  p90 %s\n", p.name, ms(median(p.times)), ms(percentile(p.times, 0.9)))
	}
	hookAny := added(ccNoop)
	fmt.Printf("\nWhere cordon's added time goes, per call:\n")
	for _, w := range []struct{ name, hook, shell string }{{ccCold, partHook, partShellCold}, {ccServed, partHookServe, partShellServe}} {
		hookOwn := part(w.hook) - part(partTrue)
		shell := part(w.shell) - part(partShell)
		fmt.Printf("\n  %s adds %s:\n", w.name, ms(added(w.name)))
		fmt.Printf("  %-62s %10s\n", "  Claude Code running a hook at all (a hook doing nothing)", ms(hookAny))
		fmt.Printf("  %-62s %10s\n", "  cordon hook claude, beyond /bin/true", ms(hookOwn))
		fmt.Printf("  %-62s %10s\n", "  the rewritten command (cordon run in it), beyond the plain one", ms(shell))
		fmt.Printf("  %-62s %10s\n", "  the rest: Claude Code, the machine", ms(added(w.name)-hookAny-hookOwn-shell))
	}
}
