package policy

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

//go:embed default.json
var defaultSettings []byte

// DefaultSettings returns the embedded default settings file: what cordon
// enforces when no settings file says otherwise.
func DefaultSettings() []byte { return bytes.Clone(defaultSettings) }

// settings is one settings file as written: Claude Code's and
// sandbox-runtime's keys plus cordon's own block.
type settings struct {
	Sandbox *sandboxSettings `json:"sandbox,omitempty"`
	Cordon  *cordonSettings  `json:"cordon,omitempty"`
}

type sandboxSettings struct {
	Enabled           *bool               `json:"enabled,omitempty"`
	FailIfUnavailable *bool               `json:"failIfUnavailable,omitempty"`
	Filesystem        *filesystemSettings `json:"filesystem,omitempty"`
	Network           *networkSettings    `json:"network,omitempty"`
}

type filesystemSettings struct {
	AllowRead      []string `json:"allowRead,omitempty"`
	DenyRead       []string `json:"denyRead,omitempty"`
	AllowWrite     []string `json:"allowWrite,omitempty"`
	DenyWrite      []string `json:"denyWrite,omitempty"`
	AllowGitConfig *bool    `json:"allowGitConfig,omitempty"`
}

type networkSettings struct {
	AllowedDomains      []string `json:"allowedDomains,omitempty"`
	DeniedDomains       []string `json:"deniedDomains,omitempty"`
	AllowUnixSockets    []string `json:"allowUnixSockets,omitempty"`
	AllowAllUnixSockets *bool    `json:"allowAllUnixSockets,omitempty"`
	AllowLocalBinding   *bool    `json:"allowLocalBinding,omitempty"`
}

type cordonSettings struct {
	Mode string       `json:"mode,omitempty"`
	Env  *envSettings `json:"env,omitempty"`
}

type envSettings struct {
	Deny  []string          `json:"deny,omitempty"`
	Allow []string          `json:"allow,omitempty"`
	Set   map[string]string `json:"set,omitempty"`
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the settings object")
	}
	return nil
}

// Default returns the embedded default policy for a workspace, with "~"
// expanded to home.
func Default(workspace, home string) (*Policy, error) {
	var s settings
	if err := decodeStrict(defaultSettings, &s); err != nil {
		return nil, fmt.Errorf("embedded default settings: %w", err)
	}
	p := &Policy{Workspace: filepath.Clean(workspace), Home: filepath.Clean(home), Mode: WorkspaceWrite}
	if err := p.apply(&s); err != nil {
		return nil, fmt.Errorf("embedded default settings: %w", err)
	}
	return p, nil
}

// apply merges one settings file into p: lists are unioned, scalars
// replaced.
func (p *Policy) apply(s *settings) error {
	if sb := s.Sandbox; sb != nil {
		if sb.FailIfUnavailable != nil {
			p.FailIfUnavailable = *sb.FailIfUnavailable
		}
		if fs := sb.Filesystem; fs != nil {
			for _, l := range []struct {
				dst *[]string
				src []string
			}{
				{&p.Filesystem.AllowRead, fs.AllowRead},
				{&p.Filesystem.DenyRead, fs.DenyRead},
				{&p.Filesystem.AllowWrite, fs.AllowWrite},
				{&p.Filesystem.DenyWrite, fs.DenyWrite},
			} {
				for _, raw := range l.src {
					abs, err := p.ExpandPath(raw)
					if err != nil {
						return err
					}
					*l.dst = appendUnique(*l.dst, abs)
				}
			}
			if fs.AllowGitConfig != nil {
				p.Filesystem.AllowGitConfig = *fs.AllowGitConfig
			}
		}
		if n := sb.Network; n != nil {
			p.Network.AllowedDomains = appendUnique(p.Network.AllowedDomains, n.AllowedDomains...)
			p.Network.DeniedDomains = appendUnique(p.Network.DeniedDomains, n.DeniedDomains...)
			p.Network.AllowUnixSockets = appendUnique(p.Network.AllowUnixSockets, n.AllowUnixSockets...)
			if n.AllowAllUnixSockets != nil {
				p.Network.AllowAllUnixSockets = *n.AllowAllUnixSockets
			}
			if n.AllowLocalBinding != nil {
				p.Network.AllowLocalBinding = *n.AllowLocalBinding
			}
		}
	}
	if c := s.Cordon; c != nil {
		if c.Mode != "" {
			m, err := ParseMode(c.Mode)
			if err != nil {
				return err
			}
			p.Mode = m
		}
		if e := c.Env; e != nil {
			p.Env.Deny = appendUnique(p.Env.Deny, e.Deny...)
			p.Env.Allow = appendUnique(p.Env.Allow, e.Allow...)
			for k, v := range e.Set {
				if p.Env.Set == nil {
					p.Env.Set = map[string]string{}
				}
				p.Env.Set[k] = v
			}
		}
	}
	return nil
}

// ExpandPath turns a path as written in settings into an absolute, clean
// path: "~" and "~/x" are relative to the home directory, "//x" is the
// absolute "/x", other absolute paths are taken as they are, and relative
// paths are relative to the workspace.
func (p *Policy) ExpandPath(raw string) (string, error) {
	switch {
	case raw == "":
		return "", fmt.Errorf("empty path")
	case raw == "~":
		return p.Home, nil
	case strings.HasPrefix(raw, "~/"):
		return filepath.Join(p.Home, raw[2:]), nil
	case strings.HasPrefix(raw, "~"):
		return "", fmt.Errorf("path %q: only the caller's own home (~/...) can be named", raw)
	case strings.HasPrefix(raw, "//"):
		return filepath.Clean(raw[1:]), nil
	case filepath.IsAbs(raw):
		return filepath.Clean(raw), nil
	}
	return filepath.Join(p.Workspace, raw), nil
}

func appendUnique(dst []string, src ...string) []string {
	for _, s := range src {
		dup := false
		for _, d := range dst {
			if d == s {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, s)
		}
	}
	return dst
}
