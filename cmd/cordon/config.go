package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/policy"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "print the effective settings and where each value came from",
		Flags: append(policyFlags(), &cli.BoolFlag{Name: "json", Usage: "print JSON"}),
		Action: func(_ context.Context, cmd *cli.Command) error {
			pol, err := loadPolicy(cmd)
			if err != nil {
				return err
			}
			if cmd.Bool("json") {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(configJSON(pol))
			}
			printConfig(pol)
			return nil
		},
	}
}

type configOut struct {
	Workspace string         `json:"workspace"`
	Trusted   bool           `json:"trusted"`
	Mode      string         `json:"mode"`
	Report    *policy.Report `json:"report"`
	Policy    *policy.Policy `json:"policy"`
}

func configJSON(p *policy.Policy) configOut {
	return configOut{Workspace: p.Workspace, Trusted: p.Trusted, Mode: p.Mode.String(), Report: p.Report, Policy: p}
}

func printConfig(p *policy.Policy) {
	r := p.Report
	trust := "not trusted (its settings may only tighten; `cordon trust` to trust it)"
	if p.Trusted {
		trust = "trusted"
	}
	fmt.Fprintf(stdout, "workspace  %s (%s)\nmode       %s\n\n", p.Workspace, trust, p.Mode)
	fmt.Fprintln(stdout, "settings files, lowest precedence first:")
	if len(r.Files) == 0 {
		fmt.Fprintln(stdout, "  (none: the embedded default policy and the command line)")
	}
	for _, f := range r.Files {
		fmt.Fprintf(stdout, "  %-8s %s\n", f.Scope, f.Path)
	}
	fmt.Fprintln(stdout, "\neffective values:")
	w := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	for _, v := range r.Values {
		fmt.Fprintf(w, "  %s\t%s\t%s\n", v.Key, v.Value, v.Source)
	}
	w.Flush()
	if len(r.Ignored) > 0 {
		fmt.Fprintln(stdout, "\nignored:")
		for _, i := range r.Ignored {
			val := ""
			if i.Value != "" {
				val = " " + i.Value
			}
			fmt.Fprintf(stdout, "  %s%s (%s): %s\n", i.Key, val, i.Source, i.Reason)
		}
	}
	fmt.Fprintln(stdout, "\nnotes:")
	for _, n := range r.Notes {
		fmt.Fprintf(stdout, "  - %s\n", strings.TrimSpace(n))
	}
}
