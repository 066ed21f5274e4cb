package main

import (
	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociPauseCommand() *cli.Command {
	return ociVerb("pause", "freeze every process of a container", runtime.OCI.Pause)
}

func ociResumeCommand() *cli.Command {
	return ociVerb("resume", "thaw a paused container", runtime.OCI.Resume)
}
