// Command bench measures what a sandboxed command costs: cordon run against
// bare exec, bubblewrap with the same isolation and runc with cordon's own
// spec, side by side in one run (interleaved, so that the machine's drift
// hits every contender alike), and prints medians and ratios; then a Bash
// call in the real Claude Code, with no sandbox, its own and cordon's
// (claude.go). Timings are never asserted: they go to the reader.
//
//	go run -tags seccomp ./integration/bench -cordon bin/cordon [-n 200] [-only proxy|startup [-compare OLD]|guard|claude] [-doc docs/performance.md]
//
// -only startup stops after the first table (bare, bubblewrap, cordon
// cold and warm, runc); with -compare OLD, OLD's cold and warm runs join
// it (its own daemon and state root), to compare two builds in one run.
// -only guard measures the system-call guard's cost on real workloads
// (guard.go), guardRuns runs each unless -n says otherwise. -only claude
// runs the Claude Code part alone, and with -doc rewrites its section of
// the document only.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"cordon.dev/cordon/probe"
)

func main() {
	cordon := flag.String("cordon", "bin/cordon", "the cordon binary")
	n := flag.Int("n", 100, "runs per contender")
	doc := flag.String("doc", "", "rewrite the figures' sections of this document (docs/performance.md) with the output (with -only claude: its section only)")
	only := flag.String("only", "", "run one part only: proxy, startup (the first table), guard (the system-call guard's cost), or claude (Claude Code's Bash calls)")
	compare := flag.String("compare", "", "with -only proxy or startup: another cordon binary measured too, interleaved")
	flag.Parse()
	abs, err := filepath.Abs(*cordon)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
	claude := func() error { return claudeBench(abs, claudeRounds(*n), claudeCalls) }
	switch {
	case *only == "claude":
		err = section(*doc, docClaude, "make bench-claude", claude)
	case *only != "":
		if (*only != "proxy" && *only != "startup" && *only != "guard") || *doc != "" {
			fmt.Fprintln(os.Stderr, "bench: -only takes proxy, startup, guard (without -doc) or claude")
			os.Exit(2)
		}
		switch *only {
		case "proxy":
			if err = proxyBench(*cordon, *compare, *n); err == nil {
				err = terminateBench(*cordon, *n)
			}
		case "guard":
			runs := guardRuns
			flag.Visit(func(f *flag.Flag) {
				if f.Name == "n" {
					runs = *n
				}
			})
			err = guardBench(abs, runs)
		default:
			err = run(*cordon, *compare, *n, true)
		}
	default:
		err = section(*doc, docMain, "make bench", func() error { return run(*cordon, "", *n, false) })
		if err == nil {
			err = section(*doc, docClaude, "make bench", claude)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// section runs part, and with a document (-doc), rewrites the section of
// it named with what part printed, under command.
func section(doc, name, command string, part func() error) error {
	if doc == "" {
		return part()
	}
	var out bytes.Buffer
	restore, err := teeStdout(&out)
	if err != nil {
		return err
	}
	err = part()
	restore()
	if err != nil {
		return err
	}
	return writeDoc(doc, name, command, out.Bytes())
}

// contender is one way of running /bin/true.
type contender struct {
	name string
	argv []string
	dir  string
	env  []string // nil: the bench's own
	// stdin is what the command reads (nothing when nil)
	stdin []byte
	// files are opened for each run as descriptors 3, 4, ...
	files []string
	// samples
	wall []time.Duration
	cpu  []time.Duration // user and system time of the process and those it waited for
	rss  []int64         // KiB, peak of the process we started (peakRSS)
}

func run(cordon, baseline string, n int, startupOnly bool) error {
	cordon, err := filepath.Abs(cordon)
	if err != nil {
		return err
	}
	if baseline != "" {
		if baseline, err = filepath.Abs(baseline); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "cordon-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ws := filepath.Join(work, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		return err
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}

	cs := []*contender{
		{name: "bare", argv: []string{truePath}, dir: ws},
	}
	if bwrap, err := exec.LookPath("bwrap"); err == nil {
		cs = append(cs, &contender{name: "bubblewrap", dir: ws, argv: []string{bwrap,
			"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
			"--bind", ws, ws, "--unshare-all", "--die-with-parent", "--new-session", truePath}})
	} else {
		fmt.Fprintln(os.Stderr, "bench: no bwrap (apt-get install bubblewrap): not compared")
	}
	// cordon's runs, cold and warm, share a home whose settings enable
	// cordon serve and a state root of the bench's own.
	env, root, err := benchEnv(work)
	if err != nil {
		return err
	}
	if bwrap, err := exec.LookPath("bwrap"); err == nil {
		eq, err := prepareEquivalent(bwrap, cordon, work, ws, truePath, env)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: no bubblewrap with cordon's isolation: %v\n", err)
		} else {
			cs = append(cs, eq)
		}
	}
	cs = append(cs, &contender{name: "cordon", dir: ws, argv: []string{cordon, "run", "--", truePath},
		env: append(slices.Clone(env), "CORDON_SERVE=0")})
	// The container mode (Landlock and seccomp, no namespaces), asked for
	// where the full sandbox works: what a run costs where cordon finds no
	// user namespaces, a container's.
	contained := filepath.Join(work, "contained.json")
	if err := os.WriteFile(contained, []byte(`{"cordon": {"containerMode": true}}`+"\n"), 0o644); err != nil {
		return err
	}
	cmode := &contender{name: "cordon (container mode)", dir: ws, argv: []string{cordon, "run", "--settings", contained, "--", truePath},
		env: append(slices.Clone(env), "CORDON_SERVE=0")}
	if err := checkContained(cmode); err != nil {
		return err
	}
	cs = append(cs, cmode)
	d, err := startDaemon(cordon, env, root, 4)
	if err != nil {
		return fmt.Errorf("cordon serve: %w", err)
	}
	defer d.stop()
	warm := &contender{name: "cordon (warm, serve)", dir: ws, argv: []string{cordon, "run", "--", truePath},
		env: append(slices.Clone(env), "CORDON_SERVE=1")}
	if err := checkWarm(warm); err != nil {
		d.stop()
		return err
	}
	cs = append(cs, warm)
	if baseline != "" {
		// The same home; a state root, and so a daemon, of its own.
		broot := filepath.Join(work, "state-baseline")
		if err := os.Mkdir(broot, 0o700); err != nil {
			return err
		}
		benv := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "CORDON_STATE_ROOT=") })
		benv = append(benv, "CORDON_STATE_ROOT="+broot)
		cs = append(cs, &contender{name: "baseline", dir: ws, argv: []string{baseline, "run", "--", truePath},
			env: append(slices.Clone(benv), "CORDON_SERVE=0")})
		bd, err := startDaemon(baseline, benv, broot, 4)
		if err != nil {
			return fmt.Errorf("baseline cordon serve: %w", err)
		}
		defer bd.stop()
		bwarm := &contender{name: "baseline (warm, serve)", dir: ws, argv: []string{baseline, "run", "--", truePath},
			env: append(slices.Clone(benv), "CORDON_SERVE=1")}
		if err := checkWarm(bwarm); err != nil {
			return err
		}
		cs = append(cs, bwarm)
	}
	if runc, bundle, err := prepareRunc(cordon, work, ws, truePath); err == nil {
		cs = append(cs, &contender{name: "runc (cordon's spec)", dir: bundle,
			argv: []string{runc, "--root", filepath.Join(work, "runc-state"), "run", "--bundle", bundle, "bench"}})
	} else {
		fmt.Fprintf(os.Stderr, "bench: runc not compared: %v\n", err)
	}

	// Warm up every contender (page cache, cordon's seccomp cache).
	for _, c := range cs {
		for range 3 {
			if _, _, err := once(c); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
	}
	for range n {
		for _, c := range cs {
			d, used, err := once(c)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			c.wall = append(c.wall, d)
			c.cpu = append(c.cpu, used)
		}
	}
	if err := measureRSS(work, cs); err != nil {
		return err
	}
	pool := d.stop()
	report(cs, n)
	fmt.Printf("the warm runs' pool: %s\n", pool)
	if startupOnly {
		return nil
	}
	if err := hookBench(cordon, n); err != nil {
		return err
	}
	if err := bridgeBench(cordon, n); err != nil {
		return err
	}
	if err := proxyBench(cordon, "", n); err != nil {
		return err
	}
	if err := terminateBench(cordon, n); err != nil {
		return err
	}
	if err := guardBench(cordon, guardRuns); err != nil {
		return err
	}
	return serveBench(cordon, truePath, env, work)
}

// A Claude Code session of the bench makes claudeCalls calls; -n runs make
// claudeRounds(n) sessions per contender.
const claudeCalls = 11

func claudeRounds(n int) int { return max(3, n/10) }

// checkWarm makes sure that the warm contender's runs go through the
// daemon: a pooled sandbox's init has no command on its command line.
func checkWarm(c *contender) error {
	cmd := exec.Command(c.argv[0], "run", "--", "cat", "/proc/1/cmdline")
	cmd.Dir, cmd.Env = c.dir, c.env
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	if !bytes.HasSuffix(out, []byte("\x00--\x00")) {
		return fmt.Errorf("%s: the run did not go through cordon serve (its init: %q)", c.name, out)
	}
	return nil
}

// checkContained makes sure that the container mode's runs have no
// namespace of their own: the command's pid namespace is the bench's.
func checkContained(c *contender) error {
	args := slices.Concat(c.argv[:len(c.argv)-1], []string{"readlink", "/proc/self/ns/pid"})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = c.dir, c.env
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	own, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(out)) != own {
		return fmt.Errorf("%s: the command ran in a pid namespace of its own (%s, the bench's %s): not the container mode", c.name, bytes.TrimSpace(out), own)
	}
	return nil
}

// rssRuns is the number of runs of each contender whose peak RSS is
// measured, after its timed runs.
const rssRuns = 11

// once runs c and returns its wall time and the CPU time it and the
// processes it waited for used (steadier than wall time on a busy
// machine).
func once(c *contender) (wall, cpu time.Duration, err error) {
	wall, cpu, _, err = onceOutput(c)
	return wall, cpu, err
}

// onceOutput is once, with the first 4 KiB of what the command printed.
func onceOutput(c *contender) (wall, cpu time.Duration, out []byte, err error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir, cmd.Env = c.dir, c.env
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	buf := &limited{}
	cmd.Stdout, cmd.Stderr = buf, buf
	for _, name := range c.files {
		f, err := os.Open(name)
		if err != nil {
			return 0, 0, nil, err
		}
		defer f.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, buf.buf, fmt.Errorf("%v: %s", err, buf.buf)
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), buf.buf, nil
}

type limited struct{ buf []byte }

func (l *limited) Write(p []byte) (int, error) {
	if len(l.buf) < 4096 {
		l.buf = append(l.buf, p...)
	}
	return len(p), nil
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func percentile(xs []time.Duration, p float64) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// favorDynmods says whether a cgroup hierarchy is mounted with
// favordynmods, which spares the cold contenders a wait for an RCU grace
// period as their sandboxes join their cgroups (docs/doctor.md).
func favorDynmods() string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(data), "\n") {
		_, super, ok := strings.Cut(line, " - ")
		f := strings.Fields(super)
		if ok && len(f) == 3 && strings.HasPrefix(f[0], "cgroup") && slices.Contains(strings.Split(f[2], ","), "favordynmods") {
			return "on"
		}
	}
	return "off"
}

// anonFolios says which folios larger than a page the kernel gives
// anonymous memory on a fault: with 64 kB ones a cold run takes about half
// its page faults (docs/doctor.md).
func anonFolios() string {
	switch f := probe.AnonFolios(); {
	case f == nil:
		return "unknown"
	case len(f) == 0:
		return "none"
	default:
		return strings.Join(f, ",")
	}
}

func report(cs []*contender, n int) {
	host, _ := os.Hostname()
	fmt.Printf("cordon bench: /bin/true, %d runs each, interleaved; %s, %d CPUs, cgroup favordynmods %s, anonymous folios %s, %s\n\n",
		n, host, runtime.NumCPU(), favorDynmods(), anonFolios(), time.Now().Format(time.DateTime))
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "contender\tmedian\tp90\tCPU (median)\tpeak RSS\t")
	for _, c := range cs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t\n", c.name, ms(median(c.wall)), ms(percentile(c.wall, 0.9)), ms(median(c.cpu)), kib(c.rss))
	}
	w.Flush()
	fmt.Println()
	byName := map[string]*contender{}
	for _, c := range cs {
		byName[c.name] = c
	}
	ratio := func(a, b, goal string) {
		ca, cb := byName[a], byName[b]
		if ca == nil || cb == nil {
			fmt.Printf("%s / %s: not measured\n", a, b)
			return
		}
		fmt.Printf("%-23s / %-33s %5.2fx   goal: %s\n", a, b, float64(median(ca.wall))/float64(median(cb.wall)), goal)
	}
	ratio("cordon", "runc (cordon's spec)", "at most 0.6x")
	ratio("cordon", "bubblewrap (cordon's isolation)", "at most 2.5x")
	ratio("cordon", "bubblewrap", "")
	ratio("cordon (warm, serve)", "bubblewrap (cordon's isolation)", "at most 1.0x")
	ratio("cordon (warm, serve)", "bubblewrap", "")
	ratio("cordon (warm, serve)", "cordon", "")
	ratio("cordon", "bare", "")
	ratio("cordon (container mode)", "cordon", "")
	ratio("cordon (container mode)", "bubblewrap", "")
	ratio("cordon (container mode)", "bare", "")
	if byName["baseline"] != nil {
		ratio("cordon (warm, serve)", "baseline (warm, serve)", "")
		ratio("baseline (warm, serve)", "bubblewrap", "")
		ratio("cordon", "baseline", "")
		// CPU time is steadier than wall time on a busy machine; a warm
		// run's sandbox was made by the daemon, so only the cold runs.
		c, b := byName["cordon"], byName["baseline"]
		fmt.Printf("%-23s / %-33s %5.2fx   (CPU time)\n", "cordon", "baseline", float64(median(c.cpu))/float64(median(b.cpu)))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// prepareRunc builds runc from the module cache (the version cordon's
// libcontainer comes from) and a bundle whose config is cordon's own spec
// for /bin/true, with the command run directly (runc has no cordon init).
func prepareRunc(cordon, work, ws, truePath string) (runc, bundle string, err error) {
	if os.Geteuid() != 0 {
		return "", "", fmt.Errorf("needs root")
	}
	if runc, err = buildRunc(work); err != nil {
		return "", "", err
	}
	// Without the system-call guard, whose calls only cordon's supervisor
	// can answer: runc would refuse them all (open for writing among them,
	// its own exec fifo's reopening too). The cordon contender has it: the
	// ratio includes its start-up.
	noGuard := filepath.Join(work, "no-guard.json")
	if err := os.WriteFile(noGuard, []byte(`{"cordon": {"syscallGuard": false}}`), 0o644); err != nil {
		return "", "", err
	}
	specCmd := exec.Command(cordon, "spec", "--settings", noGuard, "--", truePath)
	specCmd.Dir = ws
	data, err := specCmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("cordon spec: %w", err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		return "", "", err
	}
	proc := s["process"].(map[string]any)
	proc["args"] = []string{truePath}
	// runc has no supervisor for cordon's notify rules (it would want a
	// listenerPath): without them those calls get the default EPERM,
	// which is what the rules answer anyway; nor the flag that only
	// concerns them (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, which runc
	// sets through libseccomp 2.6, newer than Debian 12's).
	if sc, ok := s["linux"].(map[string]any)["seccomp"].(map[string]any); ok {
		rules, _ := sc["syscalls"].([]any)
		kept := rules[:0]
		for _, r := range rules {
			if r.(map[string]any)["action"] != "SCMP_ACT_NOTIFY" {
				kept = append(kept, r)
			}
		}
		sc["syscalls"] = kept
		flags, _ := sc["flags"].([]any)
		sc["flags"] = slices.DeleteFunc(flags, func(f any) bool { return f == "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV" })
	}
	// The root, and the workspace's package caches the spec mounts, must
	// exist for runc: cordon's run in the same workspace prepares them.
	runCmd := exec.Command(cordon, "run", "--", truePath)
	runCmd.Dir = ws
	if out, err := runCmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("cordon run: %v: %s", err, out)
	}
	bundle = filepath.Join(work, "bundle")
	if err := os.Mkdir(bundle, 0o755); err != nil {
		return "", "", err
	}
	out, _ := json.Marshal(s)
	return runc, bundle, os.WriteFile(filepath.Join(bundle, "config.json"), out, 0o644)
}

// buildRunc builds runc at the version cordon's libcontainer comes from:
// its module directory is copied out of the module cache (read-only there)
// into work and built as a module of its own with -mod=mod, which fills in
// the go.sum runc's release leaves incomplete. Only the module cache and
// the Go module proxy are used; cordon's go.mod is left alone.
func buildRunc(work string) (string, error) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/opencontainers/runc").Output()
	if err != nil {
		return "", fmt.Errorf("runc's module directory: %w", err)
	}
	src := strings.TrimSpace(string(dir))
	if src == "" {
		if out, err := exec.Command("go", "mod", "download", "github.com/opencontainers/runc").CombinedOutput(); err != nil {
			return "", fmt.Errorf("download runc: %v: %s", err, out)
		}
		if dir, err = exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/opencontainers/runc").Output(); err != nil {
			return "", fmt.Errorf("runc's module directory: %w", err)
		}
		src = strings.TrimSpace(string(dir))
	}
	mod := filepath.Join(work, "runc-src")
	if out, err := exec.Command("cp", "-r", src, mod).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copy runc's module: %v: %s", err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", mod).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copy runc's module: %v: %s", err, out)
	}
	runc := filepath.Join(work, "runc")
	// Static, as runc's releases are built (and cordon by make build).
	build := exec.Command("go", "build", "-mod=mod", "-tags", "seccomp,netgo,osusergo",
		"-ldflags", "-linkmode external -extldflags -static", "-o", runc, ".")
	build.Dir = mod
	// The copy's own go.mod rules, not cordon's workspace.
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build runc: %v: %s", err, out)
	}
	return runc, nil
}
