package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

// ociHookCommand is the hook cordon adds to a container its policy gives
// no network (see runtime.IsolateNetwork); libcontainer runs it with the
// container's state on stdin.
func ociHookCommand() *cli.Command {
	return &cli.Command{
		Name:      runtime.NetworkHookCommand,
		Usage:     "cordon's own OCI hooks",
		ArgsUsage: runtime.NetworkHookIsolate,
		Hidden:    true,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 || cmd.Args().First() != runtime.NetworkHookIsolate {
				return fmt.Errorf("usage: cordon %s %s", runtime.NetworkHookCommand, runtime.NetworkHookIsolate)
			}
			return runtime.IsolateNetwork(os.Stdin)
		},
	}
}
