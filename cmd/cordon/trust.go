package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/policy"
)

func trustCommand() *cli.Command {
	return &cli.Command{
		Name:      "trust",
		Usage:     "let a workspace's own settings files widen its sandbox",
		ArgsUsage: "[DIR]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "revoke", Usage: "stop trusting the workspace"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			dir := cmd.Args().First()
			if dir == "" {
				dir = "."
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				abs = real
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", abs)
			}
			home, err := homeDir(os.Getenv)
			if err != nil {
				return err
			}
			file := policy.UserSettingsFile(home, os.Getenv("XDG_CONFIG_HOME"))
			changed, err := policy.SetTrusted(file, abs, !cmd.Bool("revoke"))
			if err != nil {
				return err
			}
			switch {
			case !changed:
				fmt.Fprintf(stdout, "nothing to do: %s is already %s in %s\n", abs, map[bool]string{true: "untrusted", false: "trusted"}[cmd.Bool("revoke")], file)
			case cmd.Bool("revoke"):
				fmt.Fprintf(stdout, "%s is no longer trusted (%s)\n", abs, file)
			default:
				fmt.Fprintf(stdout, "trusted %s: its settings files may now widen its sandbox (%s)\n", abs, file)
			}
			return nil
		},
	}
}
