//go:build !darwin

package main

import (
	"context"

	"github.com/urfave/cli/v3"
)

// runNative runs the command the way of a system without the OCI path,
// and reports whether it did. Linux runs the OCI spec (run.go).
func runNative(context.Context, *cli.Command) (bool, error) { return false, nil }
