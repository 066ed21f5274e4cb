package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// daemon is a cordon serve the bench started, with the home and the state
// root of its own that its clients use.
type daemon struct {
	cmd  *exec.Cmd
	log  *lockedBuffer // what the daemon said
	env  []string      // the environment of cordon run for it
	root string
	done chan struct{}
}

// benchEnv is the environment of every cordon the bench runs: a home whose
// settings enable cordon serve, and a state root of the bench's own.
func benchEnv(work string) ([]string, string, error) {
	home := filepath.Join(work, "home")
	root := filepath.Join(work, "state")
	if err := os.MkdirAll(filepath.Join(home, ".config", "cordon"), 0o755); err != nil {
		return nil, "", err
	}
	if err := os.Mkdir(root, 0o700); err != nil {
		return nil, "", err
	}
	settings := filepath.Join(home, ".config", "cordon", "settings.json")
	if err := os.WriteFile(settings, []byte(`{"cordon": {"serve": true}}`+"\n"), 0o644); err != nil {
		return nil, "", err
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, name := range []string{"HOME", "XDG_CONFIG_HOME", "CORDON_STATE_ROOT", "CORDON_SERVE"} {
			if strings.HasPrefix(kv, name+"=") {
				return true
			}
		}
		return false
	})
	return append(env, "HOME="+home, "CORDON_STATE_ROOT="+root), root, nil
}

// startDaemon starts cordon serve with a pool of size sandboxes per policy
// and waits for its socket.
func startDaemon(cordon string, env []string, root string, size int) (*daemon, error) {
	cmd := exec.Command(cordon, "serve", "--pool", strconv.Itoa(size))
	cmd.Env, cmd.Dir = env, "/"
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &daemon{cmd: cmd, log: log, env: env, root: root, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(d.done)
	}()
	sock := filepath.Join(root, "serve.sock")
	for deadline := time.Now().Add(15 * time.Second); ; {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return d, nil
		}
		select {
		case <-d.done:
			return nil, errors.New("cordon serve ended before it listened")
		default:
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, errors.New("cordon serve: no socket after 15s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the daemon and waits for it; it returns the daemon's last
// word on its pool.
func (d *daemon) stop() string {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
	var last string
	for _, line := range strings.Split(d.log.String(), "\n") {
		if _, st, ok := strings.Cut(line, "cordon serve: pool: "); ok {
			last = st
		}
	}
	return last
}

// lockedBuffer is a bytes.Buffer for a process's output and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// pooled counts the daemon's sandboxes that wait for a command: their
// inits' command lines end in "--command-fd=N --", and so do those of the
// children they made ready for the command (forked, not executed); rssKiB
// is both's.
func (d *daemon) pooled() (n int, rssKiB int64) {
	waiting := func(pid int) bool {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		return len(args) >= 3 && args[len(args)-1] == "--" && strings.HasPrefix(args[len(args)-2], "--command-fd=")
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !waiting(pid) {
			continue
		}
		ppid := ppidOf(pid)
		if ppid == 0 {
			continue
		}
		if !waiting(ppid) {
			n++
		}
		rssKiB += statusKiB(pid, "VmRSS")
	}
	return n, rssKiB
}

// ppidOf is a process's parent, 0 when gone.
func ppidOf(pid int) int {
	return int(statusKiB(pid, "PPid"))
}

// statusKiB reads a number field of /proc/PID/status.
func statusKiB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			fs := strings.Fields(v)
			if len(fs) > 0 {
				n, _ := strconv.ParseInt(fs[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// serveBench measures the daemon itself: its memory with an idle pool of
// four, and many runs at once through it.
func serveBench(cordon, truePath string, env []string, work string) error {
	ws := filepath.Join(work, "ws")
	root := filepath.Join(work, "state")
	d, err := startDaemon(cordon, env, root, 4)
	if err != nil {
		return err
	}
	defer d.stop()
	run := func() (time.Duration, error) {
		cmd := exec.Command(cordon, "run", "--", truePath)
		cmd.Dir, cmd.Env = ws, append(slices.Clone(env), "CORDON_SERVE=1")
		out := &limited{}
		cmd.Stdout, cmd.Stderr = out, out
		start := time.Now()
		err := cmd.Run()
		if err != nil {
			return 0, fmt.Errorf("%v: %s", err, out.buf)
		}
		return time.Since(start), nil
	}
	// The first command makes the policy's shelf; the pool fills after it.
	if _, err := run(); err != nil {
		return err
	}
	var n int
	var poolRSS int64
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n, poolRSS = d.pooled(); n >= 4 {
			break
		}
	}
	time.Sleep(time.Second)
	n, poolRSS = d.pooled()
	pid := d.cmd.Process.Pid
	fmt.Printf("\ncordon serve --pool 4, idle with %d sandboxes ready\n\n", n)
	fmt.Printf("  daemon RSS %d KiB (anonymous %d KiB, file %d KiB, shared memory %d KiB: its sealed binary); goal: under 40 MB\n",
		statusKiB(pid, "VmRSS"), statusKiB(pid, "RssAnon"), statusKiB(pid, "RssFile"), statusKiB(pid, "RssShmem"))
	fmt.Printf("  the %d waiting sandboxes' inits and their commands' ready processes: %d KiB RSS in all\n", n, poolRSS)

	const total, parallel = 200, 16
	var mu sync.Mutex
	var walls []time.Duration
	var failures []string
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				d, err := run()
				mu.Lock()
				if err != nil {
					failures = append(failures, err.Error())
				} else {
					walls = append(walls, d)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range total {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	fmt.Printf("\ncordon run -- /bin/true through the daemon: %d runs, %d at once, in %s\n\n", total, parallel, elapsed.Round(time.Millisecond))
	if len(walls) > 0 {
		fmt.Printf("  failures %d; latency median %s, p90 %s, p99 %s, max %s\n", len(failures),
			ms(percentile(walls, 0.5)), ms(percentile(walls, 0.9)), ms(percentile(walls, 0.99)), ms(slices.Max(walls)))
	}
	fmt.Printf("  the pool: %s\n", d.stop())
	for i, f := range failures {
		if i == 3 {
			fmt.Printf("  ... and %d more\n", len(failures)-3)
			break
		}
		fmt.Printf("  failure: %s\n", f)
	}
	return nil
}
