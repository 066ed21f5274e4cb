package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "remove a stopped container (with --force, also a running one, and an unknown id is no error)",
		ArgsUsage: "CONTAINER-ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "kill the container's processes first (SIGKILL)"},
		},
		Action: ociAction(1, func(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
			if err := checkArgs(cmd, 1, exactArgs); err != nil {
				return err
			}
			return o.Delete(cmd.Args().First(), cmd.Bool("force"))
		}),
	}
}
