package main

import (
	"context"
	"encoding/json"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociFeaturesCommand() *cli.Command {
	return &cli.Command{
		Name:  "features",
		Usage: "print what this runtime supports (runtime-spec features JSON)",
		Action: ociAction(1, func(_ context.Context, cmd *cli.Command, _ runtime.OCI) error {
			if err := checkArgs(cmd, 0, exactArgs); err != nil {
				return err
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "    ")
			return enc.Encode(runtime.Features())
		}),
	}
}
