package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/caches"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/runtime"
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
			if n := tracked(pol).notice(); n != "" {
				pol.Report.Notices = append(pol.Report.Notices, n)
			}
			inv, err := here()
			if err != nil {
				return err
			}
			cc := cachesConfig(pol, inv.env)
			if cmd.Bool("json") {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				out := configJSON(pol)
				out.Caches = &cc
				return enc.Encode(out)
			}
			printConfig(pol)
			printCaches(cc)
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
	Caches    *cachesOut     `json:"caches,omitempty"`
}

// cachesOut is the package caches' part of cordon config.
type cachesOut struct {
	Enabled bool   `json:"enabled"`
	MaxSize int64  `json:"maxSize"`
	MaxAge  string `json:"maxAge"`
	Root    string `json:"root"`
	// Caches are this workspace's, and how a run here sees each:
	// "overlay" (the host's directory, copy-on-write), "redirect" (the
	// tool's variable, to Dir), or "read-only".
	Caches []cacheOut `json:"caches"`
	// Workspaces are what cordon keeps, per workspace.
	Workspaces []runtime.CacheUsage `json:"workspaces"`
}

type cacheOut struct {
	caches.Cache
	How string `json:"how"`
	Dir string `json:"dir,omitempty"`
}

// cachesConfig describes the package caches for the workspace of p, as a
// run of the full sandbox would have them.
func cachesConfig(p *policy.Policy, env []string) cachesOut {
	out := cachesOut{Enabled: p.Caches.Enabled, MaxSize: p.Caches.MaxSize, MaxAge: p.Caches.MaxAge.String(), Root: runtime.CacheRoot(p.Home, env)}
	list := caches.For(p.Home, env, goruntime.GOOS)
	cs, err := runtime.OpenCaches(runtime.CacheRequest{Root: out.Root, Workspace: p.Workspace, RunID: "config", List: list,
		Home: p.Home, Env: env, Overlay: goruntime.GOOS == "linux", DryRun: true})
	for _, c := range list {
		co := cacheOut{Cache: c, How: "read-only"}
		if err == nil && p.Caches.Enabled {
			for _, v := range cs.Views {
				switch {
				case v.Name == c.Name && v.Overlay():
					co.How, co.Dir = "overlay", filepath.Dir(v.Upper)
				case v.Name == c.Name:
					co.How, co.Dir = "redirect", v.Dir
				}
			}
		}
		out.Caches = append(out.Caches, co)
	}
	// pip's site and scripts, when its user base is redirected whole.
	for _, k := range out.Caches {
		if k.How != "redirect" {
			continue
		}
		for i := range out.Caches {
			if slices.Contains(k.Instead, out.Caches[i].Name) {
				out.Caches[i].How = "redirect (" + k.Name + ")"
			}
		}
	}
	out.Workspaces, _ = runtime.ListCaches(out.Root)
	return out
}

// printCaches prints the package caches' part of cordon config.
func printCaches(c cachesOut) {
	state := "on"
	if !c.Enabled {
		state = "off (cordon.caches.enabled): read-only, as the rest of the home"
	}
	fmt.Fprintf(stdout, "\npackage caches: %s; at most %s kept, a workspace's removed after %s unused; in %s\n", state, sizeString(c.MaxSize), c.MaxAge, c.Root)
	w := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	for _, k := range c.Caches {
		where := k.Path
		if where == "" {
			where = "$" + k.Var
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", k.Name, where, k.How, k.Dir)
	}
	w.Flush()
	if len(c.Workspaces) > 0 {
		fmt.Fprintln(stdout, "kept, the most recently used first:")
		for _, u := range c.Workspaces {
			use := ""
			if u.InUse {
				use = ", in use"
			}
			fmt.Fprintf(w, "  %s\t%s\tlast used %s%s\n", u.Workspace, sizeString(u.Size), u.LastUsed.Format("2006-01-02 15:04"), use)
		}
		w.Flush()
	}
}

// sizeString writes a size in bytes as 1.5G, 300M, 12K.
func sizeString(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64) + u.unit
		}
	}
	return strconv.FormatInt(n, 10)
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
	if len(r.Notices) > 0 {
		fmt.Fprintln(stdout, "\nnotices (said on stderr when a command runs, once per boot or agent session):")
		for _, n := range r.Notices {
			fmt.Fprintf(stdout, "  - %s\n", n)
		}
	}
	fmt.Fprintln(stdout, "\nnotes:")
	for _, n := range r.Notes {
		fmt.Fprintf(stdout, "  - %s\n", strings.TrimSpace(n))
	}
}
