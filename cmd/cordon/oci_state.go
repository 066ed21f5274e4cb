package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

func ociStateCommand() *cli.Command {
	return ociVerb("state", "print a container's state (runtime-spec state JSON; \"cordon\" says what policy cordon applied)",
		func(o runtime.OCI, id string) error {
			st, err := o.State(id)
			if err != nil {
				return err
			}
			data, err := json.MarshalIndent(st, "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "%s\n", data)
			return err
		})
}
