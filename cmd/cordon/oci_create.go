package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociCreateCommand() *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create a container from an OCI bundle; its process waits for start",
		ArgsUsage: "CONTAINER-ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "the bundle `DIR` (default: the current directory)"},
			&cli.StringFlag{Name: "console-socket", Usage: "AF_UNIX socket `PATH` that receives the pty master, when the process has a terminal"},
			&cli.StringFlag{Name: "pid-file", Usage: "write the container's init pid to `FILE`"},
			&cli.BoolFlag{Name: "no-pivot", Usage: "do not pivot_root into the root (a root on a ramdisk)"},
			&cli.BoolFlag{Name: "no-new-keyring", Usage: "keep the caller's session keyring"},
			&cli.IntFlag{Name: "preserve-fds", Usage: "pass `N` more descriptors (from 3, after any LISTEN_FDS) to the container"},
			&cli.StringFlag{Name: "pidfd-socket", Usage: "not supported"},
		},
		Action: ociAction(1, func(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
			if err := checkArgs(cmd, 1, exactArgs); err != nil {
				return err
			}
			if cmd.String("pidfd-socket") != "" {
				return fmt.Errorf("cordon create failed: --pidfd-socket is not supported")
			}
			err := o.Create(cmd.Args().First(), runtime.CreateOptions{
				Bundle:        cmd.String("bundle"),
				PidFile:       cmd.String("pid-file"),
				ConsoleSocket: cmd.String("console-socket"),
				NoPivot:       cmd.Bool("no-pivot"),
				NoNewKeyring:  cmd.Bool("no-new-keyring"),
				PreserveFDs:   int(cmd.Int("preserve-fds")),
			})
			if err != nil {
				return fmt.Errorf("cordon create failed: %w", err)
			}
			return nil
		}),
	}
}
