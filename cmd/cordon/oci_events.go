package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociEventsCommand() *cli.Command {
	return &cli.Command{
		Name:      "events",
		Usage:     "print a container's resource usage every interval and its OOM kills, as JSON lines",
		ArgsUsage: "CONTAINER-ID",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "how often to print the usage"},
			&cli.BoolFlag{Name: "stats", Usage: "print the usage once and exit"},
		},
		Action: ociAction(1, func(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
			if err := checkArgs(cmd, 1, exactArgs); err != nil {
				return err
			}
			enc := json.NewEncoder(stdout)
			return o.Events(cmd.Args().First(), cmd.Duration("interval"), cmd.Bool("stats"),
				func(e *runtime.Event) error { return enc.Encode(e) })
		}),
	}
}
