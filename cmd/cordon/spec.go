package main

import (
	"context"
	"encoding/json"

	"github.com/urfave/cli/v3"
)

func specCommand() *cli.Command {
	return &cli.Command{
		Name:         "spec",
		Usage:        "print the OCI config.json that run would execute",
		ArgsUsage:    "[--] COMMAND [ARGS...]",
		Flags:        sandboxFlags(),
		StopOnNthArg: ptr(1),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			sb, err := compile(ctx, cmd)
			if err != nil {
				return err
			}
			defer sb.close()
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "\t")
			return enc.Encode(sb.spec)
		},
	}
}
