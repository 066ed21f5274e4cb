package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "show live sandboxes",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print ids only"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			list, err := runtime.List(runtime.StateRoot())
			if err != nil {
				return err
			}
			switch {
			case cmd.Bool("json"):
				if list == nil {
					list = []runtime.Sandbox{}
				}
				return json.NewEncoder(stdout).Encode(list)
			case cmd.Bool("quiet"):
				for _, s := range list {
					fmt.Fprintln(stdout, s.ID)
				}
				return nil
			}
			w := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tSTATUS\tPID\tCREATED\tWORKSPACE\tCOMMAND")
			for _, s := range list {
				status := s.Status
				if s.Orphaned {
					status += " (orphaned)"
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, status, s.Pid,
					s.Created.Format(time.RFC3339), s.Workspace, strings.Join(s.Args, " "))
			}
			return w.Flush()
		},
	}
}

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "remove what crashed runs left behind",
		Action: func(_ context.Context, _ *cli.Command) error {
			removed, err := runtime.GC(runtime.StateRoot())
			if err != nil {
				return err
			}
			for _, id := range removed {
				fmt.Fprintf(stdout, "removed %s\n", id)
			}
			return nil
		},
	}
}
