package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

// ociSpecCommand is `cordon spec`: with a command, the config.json that
// cordon run would execute (spec.go); with no command and no policy flag,
// runc's starter config.json, written into the bundle (runc spec).
func ociSpecCommand() *cli.Command {
	c := specCommand()
	own := c.Action
	policyFlagNames := map[string]bool{}
	for _, f := range c.Flags {
		policyFlagNames[f.Names()[0]] = true
	}
	c.Usage = "print the OCI config.json that run would execute; with no command, write runc's starter config.json into the bundle"
	c.Flags = append(c.Flags,
		&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "with no command: the bundle `DIR` to write config.json into (default: the current directory)"},
		&cli.BoolFlag{Name: "rootless", Usage: "with no command: a configuration for a rootless container"},
	)
	c.Action = func(ctx context.Context, cmd *cli.Command) error {
		if cmd.Args().Len() > 0 {
			return own(ctx, cmd)
		}
		for name := range policyFlagNames {
			if cmd.IsSet(name) {
				return own(ctx, cmd)
			}
		}
		return ociAction(1, writeExampleSpec)(ctx, cmd)
	}
	return c
}

func writeExampleSpec(_ context.Context, cmd *cli.Command, _ runtime.OCI) error {
	path := filepath.Join(cmd.String("bundle"), "config.json")
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("File %s exists. Remove it first", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	data, err := json.MarshalIndent(runtime.ExampleSpec(cmd.Bool("rootless")), "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o666)
}
