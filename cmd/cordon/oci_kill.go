package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociKillCommand() *cli.Command {
	return &cli.Command{
		Name:      "kill",
		Usage:     "send a signal (default SIGTERM; a name or a number) to a container's init",
		ArgsUsage: "CONTAINER-ID [SIGNAL]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "no error when the container is not running (obsolete in runc)"},
		},
		Action: ociAction(1, func(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
			if err := checkArgs(cmd, 1, minArgs); err != nil {
				return err
			}
			if err := checkArgs(cmd, 2, maxArgs); err != nil {
				return err
			}
			raw := cmd.Args().Get(1)
			if raw == "" {
				raw = "SIGTERM"
			}
			sig, err := runtime.ParseSignal(raw)
			if err != nil {
				return err
			}
			return o.Kill(cmd.Args().First(), sig, cmd.Bool("all"))
		}),
	}
}
