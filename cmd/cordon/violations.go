package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func violationsCommand() *cli.Command {
	return &cli.Command{
		Name:  "violations",
		Usage: "list what sandboxes refused: system calls, connections, (when recorded) file accesses; and where masked credentials went",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array"},
			&cli.StringFlag{Name: "since", Usage: "only those since `WHEN`: a duration back from now (90m, 2h, 7d), a date (2026-11-22) or a time (RFC 3339)"},
			&cli.StringFlag{Name: "run", Usage: "only those of the run `ID` (as cordon list and the end-of-run note give it)"},
			&cli.StringFlag{Name: "kind", Usage: "only those of `KIND`: " + strings.Join(runtime.Kinds, ", ")},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return errors.New("violations takes no arguments")
			}
			f := runtime.Filter{Run: cmd.String("run"), Kind: cmd.String("kind")}
			if f.Kind != "" && !slices.Contains(runtime.Kinds, f.Kind) {
				return fmt.Errorf("--kind %q: want one of %s", f.Kind, strings.Join(runtime.Kinds, ", "))
			}
			if s := cmd.String("since"); s != "" {
				t, err := parseSince(s, time.Now())
				if err != nil {
					return err
				}
				f.Since = t
			}
			vs, err := runtime.ReadViolations(runtime.StoreDir(), f)
			if err != nil {
				return err
			}
			if cmd.Bool("json") {
				if vs == nil {
					vs = []runtime.Violation{}
				}
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(vs)
			}
			for _, v := range vs {
				fmt.Fprintf(stdout, "%s  %s  %-10s  %s\n", v.Time.Local().Format("2006-01-02 15:04:05"), v.Run, v.Kind, v.Summary())
			}
			return nil
		},
	}
}

// parseSince reads --since: a duration back from now (Go's, or N days as
// "7d"), a date, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseUint(days, 10, 16); err == nil {
			return now.AddDate(0, 0, -int(n)), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (90m, 2h, 7d), a date (2006-01-02) or an RFC 3339 time", s)
}
