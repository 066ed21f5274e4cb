package main

// The system-call guard's cost: the same workloads under cordon run with
// the guard on (the default) and off (cordon.syscallGuard false),
// interleaved, a few runs each: an npm install of a real project of a few
// hundred packages, offline from a cache the bench fills once; a go build
// of cordon itself with a cold build cache and a warm module cache; a
// fully trapped workload, creating 100,000 files; and cordon run -- true
// in a workspace of 100,000 files, whose start-up scans (protected names,
// a deny glob's matches) do not depend on the guard, beside an empty
// workspace's. The goal for the first two: at most 5% slower with the
// guard.

import (
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

//go:embed testdata/npm/package.json testdata/npm/package-lock.json
var npmProject embed.FS

// guardRuns is how many times each workload runs with the guard and
// without (after one untimed run each): a go build takes a minute.
const guardRuns = 3

// guardWorkload is one workload, run with the guard on and off.
type guardWorkload struct {
	name string
	// on and off run it; prepare, when set, runs before each run, untimed.
	on, off *contender
	prepare func() error
	goal    string
	// long: a minute or so a run, no untimed run first (the first timed
	// pair alternates with the second as every other).
	long bool
}

// guardBench measures the guard's cost over n runs of each workload.
func guardBench(cordon string, n int) error {
	work, err := os.MkdirTemp("", "cordon-bench-guard-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	env, _, err := benchEnv(work)
	if err != nil {
		return err
	}
	env = append(env, "CORDON_SERVE=0")
	noGuard := filepath.Join(work, "no-guard.json")
	if err := os.WriteFile(noGuard, []byte(`{"cordon": {"syscallGuard": false}}`+"\n"), 0o644); err != nil {
		return err
	}
	// pair makes the two contenders of a workload: cordon run with the
	// flags and the command, in dir, with the guard and without.
	pair := func(dir string, extra []string, flags []string, args ...string) (on, off *contender) {
		e := append(slices.Clone(env), extra...)
		on = &contender{name: "guard on", dir: dir, env: e, argv: slices.Concat([]string{cordon, "run"}, flags, []string{"--"}, args)}
		off = &contender{name: "guard off", dir: dir, env: e, argv: slices.Concat([]string{cordon, "run", "--settings", noGuard}, flags, []string{"--"}, args)}
		return on, off
	}
	var ws []*guardWorkload

	npm, count, err := prepareNPM(work)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: npm not measured: %v\n", err)
	} else {
		on, off := pair(npm, nil, nil, "npm", "ci", "--offline", "--cache", filepath.Join(npm, ".npm-cache"),
			"--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error")
		ws = append(ws, &guardWorkload{name: fmt.Sprintf("npm ci, %d packages (offline)", count), on: on, off: off, goal: "at most 1.05x", long: true})
	}

	if src, modcache, err := goModule(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: go build not measured: %v\n", err)
	} else {
		// The sandbox's /tmp is its own: each run starts with an empty
		// build cache there.
		on, off := pair(src, []string{"GOMODCACHE=" + modcache, "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local"}, nil,
			"sh", "-c", `GOCACHE=$(mktemp -d) exec go build -o /tmp/cordon.out ./cmd/cordon`)
		ws = append(ws, &guardWorkload{name: "go build ./cmd/cordon (cold build cache)", on: on, off: off, goal: "at most 1.05x", long: true})
	}

	// Every file an open with O_CREAT, every one stopped for the guard.
	files := filepath.Join(work, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		return err
	}
	on, off := pair(files, nil, nil, "sh", "-c", `mkdir d && cd d && seq 100000 | xargs touch`)
	ws = append(ws, &guardWorkload{name: "creating 100,000 files", on: on, off: off,
		prepare: func() error { return os.RemoveAll(filepath.Join(files, "d")) }})

	big := filepath.Join(work, "big")
	if err := manyFiles(big, 100_000); err != nil {
		return err
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	on, off = pair(big, nil, nil, truePath)
	ws = append(ws, &guardWorkload{name: "cordon run -- true, 100,000 files", on: on, off: off})
	on, off = pair(big, nil, []string{"--deny-read", "**/.env"}, truePath)
	ws = append(ws, &guardWorkload{name: "the same, --deny-read '**/.env'", on: on, off: off})
	empty := filepath.Join(work, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		return err
	}
	on, off = pair(empty, nil, nil, truePath)
	ws = append(ws, &guardWorkload{name: "cordon run -- true, empty workspace", on: on, off: off})

	for _, w := range ws {
		if err := checkGuard(w.on, true); err != nil {
			return err
		}
		if err := checkGuard(w.off, false); err != nil {
			return err
		}
	}
	start := time.Now()
	for _, w := range ws {
		// One run each first (the page cache, cordon's seccomp cache), but
		// for the long ones.
		first := 1
		if w.long {
			first = 0
		}
		for i := range n + first {
			order := []*contender{w.on, w.off}
			if i%2 == 1 {
				order = []*contender{w.off, w.on}
			}
			for _, c := range order {
				if w.prepare != nil {
					if err := w.prepare(); err != nil {
						return err
					}
				}
				d, used, err := once(c)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", w.name, c.name, err)
				}
				if i >= first {
					c.wall = append(c.wall, d)
					c.cpu = append(c.cpu, used)
				}
			}
		}
		if w.prepare != nil {
			if err := w.prepare(); err != nil {
				return err
			}
		}
	}

	fmt.Printf("\nthe system-call guard: cordon run with it (the default) and without (cordon.syscallGuard false), %d runs each (after an untimed one, but npm's and go's), interleaved, in %s\n\n",
		n, time.Since(start).Round(time.Second))
	tw := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tguard on\tguard off\ton/off\tCPU on\tCPU off\tgoal\t")
	for _, w := range ws {
		on, off := median(w.on.wall), median(w.off.wall)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2fx\t%s\t%s\t%s\t\n", w.name, ms(on), ms(off), float64(on)/float64(off),
			ms(median(w.on.cpu)), ms(median(w.off.cpu)), w.goal)
	}
	tw.Flush()
	return nil
}

// checkGuard makes sure that c's runs have the guard (or not): cordon
// spec with the same flags carries its annotation (or not).
func checkGuard(c *contender, want bool) error {
	i := slices.Index(c.argv, "--")
	args := slices.Concat([]string{"spec"}, c.argv[2:i], []string{"--", "true"})
	cmd := exec.Command(c.argv[0], args...)
	cmd.Dir, cmd.Env = c.dir, c.env
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: cordon spec: %w", c.name, err)
	}
	if got := strings.Contains(string(out), `"dev.cordon.guard"`); got != want {
		return fmt.Errorf("%s: the guard is %v in cordon spec, want %v", c.name, got, want)
	}
	return nil
}

// prepareNPM writes the bench's npm project (testdata/npm: a handful of
// popular packages, a few hundred in all, their versions locked) into
// work and fills its cache (in the project, .npm-cache, which npm ci
// leaves alone) from the user's bench cache, itself filled from the
// registry the first time only. It returns the project's directory and
// the number of packages.
func prepareNPM(work string) (string, int, error) {
	if _, err := exec.LookPath("npm"); err != nil {
		return "", 0, err
	}
	dir := filepath.Join(work, "npm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	var count int
	for _, name := range []string{"package.json", "package-lock.json"} {
		data, err := npmProject.ReadFile("testdata/npm/" + name)
		if err != nil {
			return "", 0, err
		}
		if name == "package-lock.json" {
			var lock struct{ Packages map[string]json.RawMessage }
			if err := json.Unmarshal(data, &lock); err != nil {
				return "", 0, fmt.Errorf("%s: %w", name, err)
			}
			count = len(lock.Packages) - 1 // (and the project itself)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", 0, err
		}
	}
	userCache, err := os.UserCacheDir()
	if err != nil {
		return "", 0, err
	}
	shared := filepath.Join(userCache, "cordon-bench", "npm")
	// npm ci --prefer-offline fetches only what the shared cache lacks.
	fill := exec.Command("npm", "ci", "--prefer-offline", "--cache", shared, "--no-audit", "--no-fund", "--no-update-notifier", "--ignore-scripts", "--loglevel=error")
	fill.Dir = dir
	if out, err := fill.CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("fill npm's cache: %v: %s", err, out)
	}
	if err := os.RemoveAll(filepath.Join(dir, "node_modules")); err != nil {
		return "", 0, err
	}
	if out, err := exec.Command("cp", "-a", shared, filepath.Join(dir, ".npm-cache")).CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("copy npm's cache: %v: %s", err, out)
	}
	return dir, count, nil
}

// goModule returns cordon's module directory (the bench runs from it) and
// the module cache, filled for it.
func goModule() (src, modcache string, err error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", "", fmt.Errorf("cordon's module: %w", err)
	}
	src = strings.TrimSpace(string(out))
	if out, err = exec.Command("go", "env", "GOMODCACHE").Output(); err != nil {
		return "", "", err
	}
	modcache = strings.TrimSpace(string(out))
	dl := exec.Command("go", "mod", "download")
	dl.Dir = src
	if out, err := dl.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go mod download: %v: %s", err, out)
	}
	return src, modcache, nil
}

// manyFiles makes a workspace of n small files, a hundred to a directory,
// three levels deep, as a mid-size monorepo's source tree.
func manyFiles(dir string, n int) error {
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("pkg%02d", i/10000), fmt.Sprintf("mod%02d", i/100%100))
		if i%100 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%02d.go", i%100)), []byte("package x\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}
