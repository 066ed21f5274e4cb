package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/policy"
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
				if s.Mode != "" {
					status += " (" + s.Mode + " mode)"
				}
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
		Usage: "remove what crashed runs left behind, and the package caches of workspaces unused for cordon.caches.maxAge or past cordon.caches.maxSize",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "caches", Usage: "remove every workspace's package caches (those of running sandboxes stay)"}},
		Action: func(_ context.Context, cmd *cli.Command) error {
			removed, err := runtime.GC(runtime.StateRoot())
			if err != nil {
				return err
			}
			for _, id := range removed {
				fmt.Fprintf(stdout, "removed %s\n", id)
			}
			// The bounds are the user's (a workspace's settings cannot
			// set them): any workspace's policy has them.
			maxAge, maxSize := policy.DefaultCachesMaxAge, int64(policy.DefaultCachesMaxSize)
			home, _ := homeDir(os.Getenv)
			if pol, err := loadPolicy(cmd); err == nil {
				maxAge, maxSize, home = pol.Caches.MaxAge, pol.Caches.MaxSize, pol.Home
			}
			gone, err := runtime.GCCaches(runtime.CacheRoot(home, os.Environ()), maxAge, maxSize, cmd.Bool("caches"), time.Now())
			for _, u := range gone {
				fmt.Fprintf(stdout, "removed the package caches of %s (%s, last used %s)\n", u.Workspace, sizeString(u.Size), u.LastUsed.Format("2006-01-02"))
			}
			return err
		},
	}
}
