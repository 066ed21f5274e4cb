package main

import (
	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociStartCommand() *cli.Command {
	return ociVerb("start", "let a created container's process run its program", runtime.OCI.Start)
}
