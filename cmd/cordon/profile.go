package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"cordon.dev/cordon/darwin"
	"cordon.dev/cordon/netproxy"
)

func profileCommand() *cli.Command {
	return &cli.Command{
		Name:      "profile",
		Usage:     "print the macOS sandbox-exec (Seatbelt) profile a run would use, on any OS",
		ArgsUsage: "[--] [COMMAND [ARGS...]]",
		Flags: append(sandboxFlags(),
			&cli.StringFlag{Name: "os", Value: "darwin", Usage: "the system to compile for: darwin (Linux runs what `cordon spec` prints)"},
			&cli.StringFlag{Name: "tag", Value: "inspect", Usage: "the run's `TAG` in the profile's denial messages (a real run makes its own)"},
		),
		StopOnNthArg: ptr(1),
		Action: func(_ context.Context, cmd *cli.Command) error {
			if goos := cmd.String("os"); goos != "darwin" && goos != "macos" {
				return fmt.Errorf("--os %s: only darwin has a profile (for Linux, cordon spec prints the OCI config)", goos)
			}
			pol, err := loadPolicy(cmd)
			if err != nil {
				return err
			}
			cwd, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("working directory: %w", err)
			}
			tag := cmd.String("tag")
			req := darwin.Request{
				Cwd:            cwd,
				Home:           pol.Home,
				TempDir:        filepath.Join(os.TempDir(), "cordon-"+tag),
				HTTPProxyPort:  orDefault(pol.Network.HTTPProxyPort, netproxy.DefaultHTTPPort),
				SOCKSProxyPort: orDefault(pol.Network.SOCKSProxyPort, netproxy.DefaultSOCKSPort),
				Tag:            tag,
				Terminal:       term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd())),
				FS:             os.DirFS("/"),
			}
			if exe, err := os.Executable(); err == nil {
				req.Executable = exe
			}
			if cmd.IsSet("tty") {
				req.Terminal = cmd.Bool("tty")
			}
			profile, err := darwin.Profile(pol, req)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(stdout, profile)
			return err
		},
	}
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
