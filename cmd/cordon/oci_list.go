package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

// ociListCommand is `cordon list`: without --root or --format, the
// sandboxes of cordon run (list.go); with either, runc's list of the OCI
// containers under the root (--root, or the default OCI root).
func ociListCommand() *cli.Command {
	c := listCommand()
	own := c.Action
	c.Usage = "show live sandboxes; with --root or --format, the OCI containers under the root, as runc's list"
	c.Flags = append(c.Flags,
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "with the OCI containers: table or json"},
	)
	c.Action = func(ctx context.Context, cmd *cli.Command) error {
		if !cmd.IsSet("root") && !cmd.IsSet("format") {
			return own(ctx, cmd)
		}
		return ociAction(1, ociList)(ctx, cmd)
	}
	return c
}

func ociList(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
	if err := checkArgs(cmd, 0, exactArgs); err != nil {
		return err
	}
	list, err := o.List(cmd.IsSet("root"))
	if err != nil {
		return err
	}
	if cmd.Bool("quiet") {
		for _, c := range list {
			fmt.Fprintln(stdout, c.ID)
		}
		return nil
	}
	format := cmd.String("format")
	if cmd.Bool("json") {
		format = "json"
	}
	switch format {
	case "table":
		w := tabwriter.NewWriter(stdout, 12, 1, 3, ' ', 0)
		fmt.Fprint(w, "ID\tPID\tSTATUS\tBUNDLE\tCREATED\tOWNER\n")
		for _, c := range list {
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", c.ID, c.Pid, c.Status, c.Bundle,
				c.Created.Format(time.RFC3339Nano), c.Owner)
		}
		return w.Flush()
	case "json":
		// runc prints null for no containers.
		return json.NewEncoder(stdout).Encode(list)
	}
	return errors.New("invalid format option")
}
