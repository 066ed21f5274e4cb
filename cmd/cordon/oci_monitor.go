package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

// ociMonitorCommand is the monitor `create` starts for a container whose
// policy serves cordon's proxy or records violations (see
// runtime.RunMonitor): its control socket is fd 3.
func ociMonitorCommand() *cli.Command {
	return &cli.Command{
		Name:      runtime.MonitorCommand,
		Usage:     "a container's monitor (started by create)",
		ArgsUsage: "CONTAINER-ID",
		Hidden:    true,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return fmt.Errorf("usage: cordon %s CONTAINER-ID", runtime.MonitorCommand)
			}
			ctl := os.NewFile(3, "monitor-control")
			if ctl == nil {
				return fmt.Errorf("cordon %s: no control socket (it is started by create)", runtime.MonitorCommand)
			}
			return runtime.RunMonitor(ctl)
		},
	}
}
