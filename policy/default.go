package policy

import (
	"bytes"
	_ "embed"
)

//go:embed default.json
var defaultSettings []byte

// DefaultSettings returns the embedded default settings file: what cordon
// enforces when no settings file says otherwise.
func DefaultSettings() []byte { return bytes.Clone(defaultSettings) }

// Default returns the embedded default policy for a workspace, alone: no
// settings file is read.
func Default(workspace, home string) (*Policy, error) {
	return Load(LoadOptions{Workspace: workspace, Cwd: workspace, Home: home, NoDiscovery: true})
}
