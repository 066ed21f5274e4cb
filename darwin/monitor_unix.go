//go:build unix

package darwin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// logCommand is the program StartMonitor runs: LogCommand, which tests
// replace with a stand-in.
var logCommand = LogCommand

// monitorReady bounds how long `log stream` may take to start filtering.
const monitorReady = 3 * time.Second

// streamReady starts the line `log stream` prints once it filters.
const streamReady = "Filtering the log data using "

// Monitor follows the unified log for the violations of one run.
type Monitor struct {
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// StartMonitor starts following the unified log for the denials of the
// run tagged tag, and returns once the log filters (so that no denial of a
// command started afterwards is missed). report is called, from the
// monitor's goroutine, with every violation of that run.
func StartMonitor(ctx context.Context, tag string, report func(Violation)) (*Monitor, error) {
	if !tagPattern.MatchString(tag) {
		return nil, fmt.Errorf("%w: run tag %q", ErrInvalid, tag)
	}
	cmd := exec.CommandContext(ctx, logCommand, StreamArgs(tag)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s stream: %w", logCommand, err)
	}
	m := &Monitor{cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	var readyOnce sync.Once
	markReady := func(line string) bool {
		if strings.HasPrefix(line, streamReady) {
			readyOnce.Do(func() { close(ready) })
			return true
		}
		return false
	}
	var stderrText strings.Builder
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if !markReady(sc.Text()) && stderrText.Len() < 4096 {
				stderrText.WriteString(sc.Text() + "\n")
			}
		}
	}()
	go func() {
		defer close(m.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			if markReady(sc.Text()) {
				continue
			}
			if v, ok := ParseViolation(sc.Bytes()); ok && v.Tag == tag {
				report(v)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case <-ready:
		return m, nil
	case <-m.done:
		<-stderrDone
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s stream ended before filtering: %s", LogCommand, strings.TrimSpace(stderrText.String()))
	case <-time.After(monitorReady):
		_ = m.Stop(0)
		return nil, errors.New(LogCommand + " stream did not start filtering")
	}
}

// Stop waits flush for denials still on their way (the kernel logs a
// denial asynchronously), then ends the stream; report is not called
// after it returns.
func (m *Monitor) Stop(flush time.Duration) error {
	m.once.Do(func() {
		time.Sleep(flush)
		_ = m.cmd.Process.Kill()
		<-m.done
		_ = m.cmd.Wait()
	})
	return nil
}
