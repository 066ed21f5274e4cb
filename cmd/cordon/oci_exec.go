package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociExecCommand() *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "run a new process in a container",
		ArgsUsage: "CONTAINER-ID COMMAND [ARGS...] | --process FILE CONTAINER-ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "process", Aliases: []string{"p"}, Usage: "the process, as a runtime-spec process JSON `FILE`"},
			&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "return once the process runs"},
			&cli.StringFlag{Name: "pid-file", Usage: "write the process's pid to `FILE`"},
			&cli.StringFlag{Name: "console-socket", Usage: "AF_UNIX socket `PATH` that receives the pty master (with --detach and a terminal)"},
			&cli.StringFlag{Name: "cwd", Usage: "working directory in the container"},
			&cli.StringSliceFlag{Name: "env", Aliases: []string{"e"}, Usage: "add `NAME=VALUE` to the environment; repeatable"},
			&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "give the process a terminal"},
			&cli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "`UID[:GID]`"},
			&cli.Int64SliceFlag{Name: "additional-gids", Aliases: []string{"g"}, Usage: "additional `GID`; repeatable"},
			&cli.StringFlag{Name: "process-label", Usage: "SELinux label of the process"},
			&cli.StringFlag{Name: "apparmor", Usage: "AppArmor profile of the process"},
			&cli.BoolFlag{Name: "no-new-privs", Usage: "set no_new_privs"},
			&cli.StringSliceFlag{Name: "cap", Aliases: []string{"c"}, Usage: "add a capability to the bounding, effective and permitted sets; repeatable"},
			&cli.IntFlag{Name: "preserve-fds", Usage: "pass `N` more descriptors (from 3) to the process"},
			&cli.BoolFlag{Name: "ignore-paused", Usage: "exec in a paused container too"},
			&cli.StringSliceFlag{Name: "cgroup", Usage: "not supported"},
			&cli.StringFlag{Name: "pidfd-socket", Usage: "not supported"},
		},
		// Everything after the id is the command, flags included.
		StopOnNthArg: ptr(1),
		Action: ociAction(255, func(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
			if err := checkArgs(cmd, 1, minArgs); err != nil {
				return err
			}
			status, err := ociExec(cmd, o)
			if err != nil {
				return fmt.Errorf("exec failed: %w", err)
			}
			if status != 0 {
				return exitStatus(status)
			}
			return nil
		}),
	}
}

func ociExec(cmd *cli.Command, o runtime.OCI) (int, error) {
	for _, unsupported := range []string{"cgroup", "pidfd-socket"} {
		if cmd.IsSet(unsupported) {
			return -1, fmt.Errorf("--%s is not supported", unsupported)
		}
	}
	id := cmd.Args().First()
	p, err := execProcess(cmd, o, id)
	if err != nil {
		return -1, err
	}
	return o.Exec(id, p, runtime.ExecOptions{
		Detach:        cmd.Bool("detach"),
		PidFile:       cmd.String("pid-file"),
		ConsoleSocket: cmd.String("console-socket"),
		PreserveFDs:   int(cmd.Int("preserve-fds")),
		IgnorePaused:  cmd.Bool("ignore-paused"),
		Stdin:         os.Stdin,
		Stdout:        os.Stdout,
		Stderr:        os.Stderr,
	})
}

// execProcess is the process to run: the --process file as it is, or the
// bundle's process with the command line's arguments and overrides, as
// runc builds it.
func execProcess(cmd *cli.Command, o runtime.OCI, id string) (*specs.Process, error) {
	if path := cmd.String("process"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var p specs.Process
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, err
		}
		return &p, nil
	}
	p, err := o.BundleProcess(id)
	if err != nil {
		return nil, err
	}
	args := cmd.Args().Slice()
	if len(args) < 2 {
		return nil, errors.New("exec args cannot be empty")
	}
	p.Args = args[1:]
	if cwd := cmd.String("cwd"); cwd != "" {
		p.Cwd = cwd
	}
	if a := cmd.String("apparmor"); a != "" {
		p.ApparmorProfile = a
	}
	if l := cmd.String("process-label"); l != "" {
		p.SelinuxLabel = l
	}
	if caps := cmd.StringSlice("cap"); len(caps) > 0 {
		if p.Capabilities == nil {
			p.Capabilities = &specs.LinuxCapabilities{}
		}
		c := p.Capabilities
		for _, name := range caps {
			c.Bounding = append(c.Bounding, name)
			c.Effective = append(c.Effective, name)
			c.Permitted = append(c.Permitted, name)
			// Ambient needs inheritable: only when the spec has some.
			if c.Inheritable != nil {
				c.Ambient = append(c.Ambient, name)
			}
		}
	}
	p.Env = append(p.Env, cmd.StringSlice("env")...)
	p.Terminal = cmd.Bool("tty")
	if cmd.IsSet("no-new-privs") {
		p.NoNewPrivileges = cmd.Bool("no-new-privs")
	}
	if u := cmd.String("user"); u != "" {
		uid, gid, hasGID := strings.Cut(u, ":")
		if hasGID {
			g, err := strconv.Atoi(gid)
			if err != nil {
				return nil, fmt.Errorf("bad gid: %w", err)
			}
			p.User.GID = uint32(g)
		}
		n, err := strconv.Atoi(uid)
		if err != nil {
			return nil, fmt.Errorf("bad uid: %w", err)
		}
		p.User.UID = uint32(n)
	}
	for _, g := range cmd.Int64Slice("additional-gids") {
		if g < 0 {
			return nil, fmt.Errorf("additional-gids must be a positive number %d", g)
		}
		p.User.AdditionalGids = append(p.User.AdditionalGids, uint32(g))
	}
	return p, nil
}
