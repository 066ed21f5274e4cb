package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/runtime"
	"cordon.dev/cordon/spec"
)

// sandboxFlags are the flags of every command that compiles a sandbox.
func sandboxFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the directory the command may write to (default: the current directory)"},
		&cli.StringFlag{Name: "mode", Usage: "permission mode: read-only mounts the workspace read-only"},
		&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "give the command a terminal of its own (default: when stdin and stdout are terminals)"},
	}
}

// sandbox is one compiled command.
type sandbox struct {
	policy *policy.Policy
	req    spec.Request
	spec   *specs.Spec
}

// compile loads the policy and compiles the command line into a spec.
func compile(cmd *cli.Command) (*sandbox, error) {
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return nil, fmt.Errorf("no command given (usage: cordon %s [flags] -- COMMAND [ARGS...])", cmd.Name)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	workspace := cwd
	if w := cmd.String("workspace"); w != "" {
		if workspace, err = filepath.Abs(w); err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("home directory: %w", err)
	}
	pol, err := policy.Default(workspace, home)
	if err != nil {
		return nil, err
	}
	if m := cmd.String("mode"); m != "" {
		if pol.Mode, err = policy.ParseMode(m); err != nil {
			return nil, fmt.Errorf("--mode: %w", err)
		}
	}
	host, err := runtime.HostPaths(runtime.StateRoot())
	if err != nil {
		return nil, err
	}
	req := spec.Request{
		ID:   runtime.NewID(),
		Args: args,
		Cwd:  cwd,
		Env:  os.Environ(),
		UID:  uint32(os.Getuid()),
		GID:  uint32(os.Getgid()),
		Host: host,
	}
	req.Terminal = term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
	if cmd.IsSet("tty") {
		req.Terminal = cmd.Bool("tty")
	}
	if req.Terminal {
		if w, h, err := term.GetSize(int(os.Stdin.Fd())); err == nil {
			req.ConsoleSize = &specs.Box{Width: uint(w), Height: uint(h)}
		}
	}
	s, err := spec.Compile(pol, req, probe.Basic())
	if err != nil {
		return nil, err
	}
	return &sandbox{policy: pol, req: req, spec: s}, nil
}
