//go:build linux && cgo

package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/serve"
)

// TestClientFlags: every flag the C client lets through is one of cordon
// run's, taking a value exactly when cordon run's does, and none of them
// makes a run cold (a terminal, --detach) or prints help.
func TestClientFlags(t *testing.T) {
	known := map[string]cli.Flag{}
	for _, f := range runCommand().Flags {
		for _, n := range f.Names() {
			known[n] = f
		}
	}
	flags := serve.ClientFlags()
	if len(flags) == 0 {
		t.Fatal("the C client knows no flag")
	}
	for name, value := range flags {
		f, ok := known[name]
		if !ok {
			t.Errorf("the C client's flag %q is not cordon run's", name)
			continue
		}
		_, isBool := f.(*cli.BoolFlag)
		if value == isBool {
			t.Errorf("flag %q: the C client says it takes a value: %v; cordon run's is a %T", name, value, f)
		}
		if slices.Contains([]string{"detach", "d", "tty", "t", "help", "h"}, name) {
			t.Errorf("the C client lets %q through", name)
		}
	}
}

// parseRun parses cordon run's arguments as cordon run does, without
// running anything.
func parseRun(args []string) (*cli.Command, error) {
	var parsed *cli.Command
	rc := runCommand()
	rc.Writer, rc.ErrWriter = &strings.Builder{}, &strings.Builder{}
	rc.OnUsageError = func(_ context.Context, _ *cli.Command, err error, _ bool) error { return err }
	rc.Action = func(_ context.Context, cmd *cli.Command) error {
		parsed = cmd
		return nil
	}
	err := rc.Run(context.Background(), append([]string{"cordon run"}, args...))
	return parsed, err
}

func TestClientScan(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"a command", []string{"--", "true"}, 1},
		{"without --", []string{"ls", "-la"}, 0},
		{"flags", []string{"--workspace", "/w", "--stats", "--allow-write=/x", "-w", "-odd", "--", "true"}, 7},
		{"single-dash long flags", []string{"-settings", "s.json", "-record-reads", "ls"}, 3},
		{"a command's own flags", []string{"--", "ls", "--detach"}, 1},
		{"--detach", []string{"--detach", "--", "true"}, -1},
		{"-d", []string{"-d", "true"}, -1},
		{"--tty", []string{"--tty=false", "true"}, -1},
		{"--help", []string{"--help"}, -1},
		{"a bool with a value", []string{"--stats=true", "true"}, -1},
		{"an unknown flag", []string{"--nope", "true"}, -1},
		{"a global flag", []string{"--root", "/r", "true"}, -1},
		{"a value missing", []string{"--workspace"}, -1},
		{"no command", []string{"--stats", "--"}, -1},
		{"nothing", nil, -1},
		{"help", []string{"help"}, -1},
		{"a space", []string{" --stats", "true"}, -1},
		{"an empty command", []string{"--", ""}, -1},
		{"a dash command", []string{"--", "-x"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serve.ClientScan(tc.args); got != tc.want {
				t.Errorf("ClientScan(%q) = %d, want %d", tc.args, got, tc.want)
			}
			checkScan(t, tc.args)
		})
	}
}

// checkScan: a command line the C client sends is one cordon run parses,
// with the command where the C client found it, and none that cordon run would not hand to the
// daemon.
func checkScan(t *testing.T, args []string) {
	t.Helper()
	i := serve.ClientScan(args)
	if i < 0 {
		return
	}
	cmd, err := parseRun(args)
	if err != nil || cmd == nil {
		t.Fatalf("the C client sends %q, which cordon run refuses: %v", args, err)
	}
	// The daemon parses the arguments as sent: only where the command
	// starts matters here (cordon run drops a "--" right after it).
	if got := cmd.Args().Slice(); len(got) == 0 || got[0] != args[i] {
		t.Fatalf("the C client sends %q with the command %q; cordon run runs %q", args, args[i:], got)
	}
	if cmd.Bool("detach") || cmd.IsSet("tty") || cmd.Bool("help") {
		t.Fatalf("the C client sends %q, which cordon run runs cold", args)
	}
}

// FuzzClientScan: whatever the C client sends, cordon run parses the same
// way.
func FuzzClientScan(f *testing.F) {
	f.Add("--workspace\x00/w\x00--stats\x00--\x00true")
	f.Add("-w\x00x\x00ls\x00-l")
	f.Add("--settings=a\x00-record-writes\x00help")
	f.Fuzz(func(t *testing.T, joined string) {
		checkScan(t, strings.Split(joined, "\x00"))
	})
}

// TestClientHookInputLimit: the C client keeps as much of cordon hook
// claude's input as the hook reads, so that a longer one is refused by
// both alike.
func TestClientHookInputLimit(t *testing.T) {
	if got := serve.ClientHookInputLimit(); got != hookInputLimit {
		t.Errorf("the C client keeps %d bytes of the hook's input, the hook reads %d", got, hookInputLimit)
	}
}
