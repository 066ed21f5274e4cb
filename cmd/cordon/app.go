package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"
)

// Exit statuses of cordon's own.
const (
	exitCordonFailed = 125 // cordon could not do what was asked; nothing ran
)

// exitStatus carries the command's exit status out of an action.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)

func newApp() *cli.Command {
	app := &cli.Command{
		Name:                  "cordon",
		Usage:                 "run agents' shell commands in an operating-system sandbox",
		HideHelpCommand:       true,
		EnableShellCompletion: false,
		Writer:                stdout,
		ErrWriter:             stderr,
		ExitErrHandler:        func(context.Context, *cli.Command, error) {},
		OnUsageError: func(_ context.Context, _ *cli.Command, err error, _ bool) error {
			return err
		},
		// runc's global flags, for the OCI verbs (oci.go).
		Flags: globalFlags(),
		Commands: append([]*cli.Command{
			runCommand(),
			serveCommand(),
			ociSpecCommand(),
			ociListCommand(),
			gcCommand(),
			violationsCommand(),
			logsCommand(),
			stopCommand(),
			doctorCommand(),
			configCommand(),
			trustCommand(),
			profileCommand(),
			proxyCommand(),
			proxyConnectCommand(),
			checkCommand(),
			hookCommand(),
			installCommand(),
		}, ociCommands()...),
	}
	// A usage error is cordon's own failure: one line, no help text.
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = app.OnUsageError
		}
	}
	return app
}

// run executes the CLI and returns the process exit status.
func run(ctx context.Context, args []string) int {
	err := newApp().Run(ctx, args)
	var st exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &st):
		return int(st)
	}
	fmt.Fprintf(stderr, "cordon: %v\n", err)
	return exitCordonFailed
}

func ptr[T any](v T) *T { return &v }
