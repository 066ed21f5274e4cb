package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/runtime"
)

func ociUpdateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "change a running container's resource limits",
		ArgsUsage: "CONTAINER-ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "resources", Aliases: []string{"r"}, Usage: "runtime-spec linux.resources JSON `FILE`, - for stdin (the other flags are then ignored)"},
			&cli.IntFlag{Name: "blkio-weight", Usage: "block IO weight, 10 to 1000"},
			&cli.StringFlag{Name: "cpu-period", Usage: "CPU CFS period (µs)"},
			&cli.StringFlag{Name: "cpu-quota", Usage: "CPU CFS quota (µs per period)"},
			&cli.StringFlag{Name: "cpu-burst", Usage: "CPU CFS burst (µs)"},
			&cli.StringFlag{Name: "cpu-share", Usage: "CPU shares"},
			&cli.StringFlag{Name: "cpu-rt-period", Usage: "CPU realtime period (µs)"},
			&cli.StringFlag{Name: "cpu-rt-runtime", Usage: "CPU realtime runtime (µs per period)"},
			&cli.StringFlag{Name: "cpuset-cpus", Usage: "CPUs to use"},
			&cli.StringFlag{Name: "cpuset-mems", Usage: "memory nodes to use"},
			&cli.StringFlag{Name: "cpu-idle", Usage: "1: SCHED_IDLE"},
			&cli.StringFlag{Name: "memory", Usage: "memory limit (`SIZE`; -1: none)"},
			&cli.StringFlag{Name: "memory-reservation", Usage: "memory soft limit (`SIZE`)"},
			&cli.StringFlag{Name: "memory-swap", Usage: "memory and swap limit (`SIZE`; -1: unlimited swap)"},
			&cli.IntFlag{Name: "pids-limit", Usage: "most processes"},
		},
		Action: ociAction(1, func(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
			if err := checkArgs(cmd, 1, exactArgs); err != nil {
				return err
			}
			r, err := updateResources(cmd)
			if err != nil {
				return err
			}
			return o.Update(cmd.Args().First(), r)
		}),
	}
}

// updateResources reads the new limits from --resources or the flags.
func updateResources(cmd *cli.Command) (*specs.LinuxResources, error) {
	f := false
	r := &specs.LinuxResources{
		// Unset and zero differ: only what is given changes.
		Memory:  &specs.LinuxMemory{CheckBeforeUpdate: &f},
		CPU:     &specs.LinuxCPU{},
		BlockIO: &specs.LinuxBlockIO{},
		Pids:    &specs.LinuxPids{},
	}
	if in := cmd.String("resources"); in != "" {
		var src io.Reader = os.Stdin
		if in != "-" {
			file, err := os.Open(in)
			if err != nil {
				return nil, err
			}
			defer file.Close()
			src = file
		}
		if err := json.NewDecoder(src).Decode(r); err != nil {
			return nil, err
		}
		return r, nil
	}
	if v := cmd.Int("blkio-weight"); v != 0 {
		r.BlockIO.Weight = ptr(uint16(v))
	}
	r.CPU.Cpus, r.CPU.Mems = cmd.String("cpuset-cpus"), cmd.String("cpuset-mems")
	if v := cmd.String("cpu-idle"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid value for cpu-idle: %w", err)
		}
		r.CPU.Idle = &n
	}
	for _, u := range []struct {
		flag string
		dst  **uint64
	}{{"cpu-burst", &r.CPU.Burst}, {"cpu-period", &r.CPU.Period}, {"cpu-rt-period", &r.CPU.RealtimePeriod}, {"cpu-share", &r.CPU.Shares}} {
		if v := cmd.String(u.flag); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("invalid value for %s: %w", u.flag, err)
			}
			*u.dst = &n
		}
	}
	for _, i := range []struct {
		flag string
		dst  **int64
	}{{"cpu-quota", &r.CPU.Quota}, {"cpu-rt-runtime", &r.CPU.RealtimeRuntime}} {
		if v := cmd.String(i.flag); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("invalid value for %s: %w", i.flag, err)
			}
			*i.dst = &n
		}
	}
	for _, m := range []struct {
		flag string
		dst  **int64
	}{{"memory", &r.Memory.Limit}, {"memory-swap", &r.Memory.Swap}, {"memory-reservation", &r.Memory.Reservation}} {
		v := cmd.String(m.flag)
		if v == "" {
			continue
		}
		n := int64(-1)
		if v != "-1" {
			var err error
			if n, err = policy.ParseSize(v); err != nil {
				return nil, fmt.Errorf("invalid value for %s: %w", m.flag, err)
			}
		}
		*m.dst = &n
	}
	if cmd.IsSet("pids-limit") {
		r.Pids.Limit = ptr(int64(cmd.Int("pids-limit")))
	}
	return r, nil
}
