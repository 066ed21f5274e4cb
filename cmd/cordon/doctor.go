package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/darwin"
	"cordon.dev/cordon/probe"
)

// exitUnavailable is doctor's status when cordon cannot sandbox here.
const exitUnavailable = 1

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "report what this kernel and user can do for a sandbox, and how to fix what is missing",
		Description: "Exit status: 0 for a full or degraded sandbox, 1 when none is available, " +
			"125 when the probes cannot run. See docs/doctor.md.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the facts and the verdict as JSON"},
			&cli.BoolFlag{Name: "fresh", Usage: "probe again instead of using this boot's cached result"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if runtime.GOOS == "darwin" {
				return doctorMacOS(cmd, os.Stat, stdout, stderr)
			}
			r, err := probe.Load(ctx, probe.Options{Fresh: cmd.Bool("fresh")})
			if err != nil {
				return err
			}
			rep := probe.NewReport(r)
			dir, _ := os.Getwd()
			claude := checkClaude(dir)
			if cmd.Bool("json") {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				err = enc.Encode(struct {
					probe.Report
					ClaudeCode claudeReport `json:"claudeCode"`
				}{rep, claude})
			} else if err = rep.WriteText(stdout); err == nil {
				err = claude.writeText(stdout)
			}
			if err != nil {
				return err
			}
			if rep.Level == probe.Unavailable {
				return exitStatus(exitUnavailable)
			}
			return nil
		},
	}
}

// doctorMacOS reports what a run under sandbox-exec has, and what the
// policy of the current directory leaves closed (darwin.Diagnose).
func doctorMacOS(cmd *cli.Command, stat func(string) (fs.FileInfo, error), out, errOut io.Writer) error {
	pol, err := loadPolicy(cmd)
	if err != nil {
		fmt.Fprintf(errOut, "cordon: doctor: the settings of this directory: %v\n", err)
		pol = nil
	}
	d := darwin.Diagnose(stat, pol)
	dir, _ := os.Getwd()
	claude := checkClaude(dir)
	if cmd.Bool("json") {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			darwin.Diagnosis
			ClaudeCode claudeReport `json:"claudeCode"`
		}{d, claude})
	} else if err = d.WriteText(out); err == nil {
		err = claude.writeText(out)
	}
	if err != nil {
		return err
	}
	if d.Verdict != "full" {
		return exitStatus(exitUnavailable)
	}
	return nil
}
