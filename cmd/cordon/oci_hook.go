package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

// ociHookCommand runs the hooks cordon adds to a container: the one that
// removes interfaces from a container its policy gives no network or the
// proxy (see runtime.IsolateNetwork), and a rootless runtime's proxy hook
// (see runtime.ProxyListen); libcontainer runs them with the container's
// state on stdin.
func ociHookCommand() *cli.Command {
	return &cli.Command{
		Name:      runtime.NetworkHookCommand,
		Usage:     "cordon's own OCI hooks",
		ArgsUsage: runtime.NetworkHookIsolate + " | " + runtime.NetworkHookProxy + " SOCKET",
		Hidden:    true,
		Action: func(_ context.Context, cmd *cli.Command) error {
			switch args := cmd.Args().Slice(); {
			case len(args) == 1 && args[0] == runtime.NetworkHookIsolate:
				return runtime.IsolateNetwork(os.Stdin)
			case len(args) == 2 && args[0] == runtime.NetworkHookProxy:
				return runtime.ProxyListen(os.Stdin, args[1])
			}
			return fmt.Errorf("usage: cordon %s %s | %s SOCKET", runtime.NetworkHookCommand, runtime.NetworkHookIsolate, runtime.NetworkHookProxy)
		},
	}
}
