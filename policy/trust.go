package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// UserSettingsFile is cordon's user settings file:
// $XDG_CONFIG_HOME/cordon/settings.json, or ~/.config/cordon/settings.json.
func UserSettingsFile(home, configHome string) string {
	if configHome == "" {
		configHome = filepath.Join(home, ".config")
	}
	return filepath.Join(configHome, "cordon", "settings.json")
}

// SetTrusted adds dir to (or with trusted false, removes it from)
// cordon.trustedWorkspaces in the user settings file, creating the file if
// needed. It reports whether the file changed. The rest of the file is
// kept (as JSON: its formatting is rewritten); a file that does not load
// is left alone and its error returned.
func SetTrusted(file, dir string, trusted bool) (bool, error) {
	if !filepath.IsAbs(dir) {
		return false, fmt.Errorf("trust %s: not an absolute path", dir)
	}
	// A settings file linked into a dotfiles repository is written where
	// it points: renaming over the link would replace it.
	if real, err := filepath.EvalSymlinks(file); err == nil {
		file = real
	}
	doc := map[string]any{}
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("read %s: %w", file, err)
	default:
		// The file must be valid settings before and after.
		if _, err := readLayer(file, data, ScopeUser, formatCordon, LoadOptions{Home: "/", Cwd: "/"}, "/"); err != nil {
			return false, err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return false, fmt.Errorf("read %s: %w", file, err)
		}
	}
	cordon, _ := doc["cordon"].(map[string]any)
	if cordon == nil {
		cordon = map[string]any{}
	}
	var list []string
	if raw, ok := cordon["trustedWorkspaces"].([]any); ok {
		for _, v := range raw {
			if s, ok := v.(string); ok {
				list = append(list, s)
			}
		}
	}
	dir = filepath.Clean(dir)
	has := slices.Contains(list, dir)
	if has == trusted {
		return false, nil
	}
	if trusted {
		list = append(list, dir)
	} else {
		list = slices.DeleteFunc(list, func(s string) bool { return s == dir })
	}
	cordon["trustedWorkspaces"] = list
	doc["cordon"] = cordon
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return false, err
	}
	out = append(out, '\n')
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return false, fmt.Errorf("write %s: %w", file, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".settings-*.json")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", file, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", file, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return false, fmt.Errorf("write %s: %w", file, err)
	}
	return true, nil
}
