package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociPsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ps",
		Usage:     "show a container's processes (ps -ef, or the given ps options; --format json: the pids)",
		ArgsUsage: "CONTAINER-ID [PS-OPTIONS...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "table or json"},
		},
		StopOnNthArg: ptr(1),
		Action: ociAction(1, func(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
			if err := checkArgs(cmd, 1, minArgs); err != nil {
				return err
			}
			pids, err := o.Processes(cmd.Args().First())
			if err != nil {
				return err
			}
			switch cmd.String("format") {
			case "table":
			case "json":
				if pids == nil {
					pids = []int{}
				}
				return json.NewEncoder(stdout).Encode(pids)
			default:
				return errors.New("invalid format option")
			}
			return psTable(cmd.Args().Slice()[1:], pids)
		}),
	}
}

// psTable runs ps and keeps its header and the container's processes.
func psTable(args []string, pids []int) error {
	if len(args) == 0 {
		args = []string{"-ef"}
	}
	out, err := exec.Command("ps", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	col := slices.Index(strings.Fields(lines[0]), "PID")
	if col < 0 {
		return errors.New("couldn't find PID field in ps output")
	}
	fmt.Fprintln(stdout, lines[0])
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) <= col {
			continue
		}
		pid, err := strconv.Atoi(f[col])
		if err != nil {
			return fmt.Errorf("unable to parse pid: %w", err)
		}
		if slices.Contains(pids, pid) {
			fmt.Fprintln(stdout, line)
		}
	}
	return nil
}
