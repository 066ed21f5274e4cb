package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/urfave/cli/v3"
)

// TestDoctorMacOS: on macOS doctor reports sandbox-exec and what the
// settings of the current directory leave closed: TLS verification
// through trustd, unless sandbox.enableWeakerNetworkIsolation.
func TestDoctorMacOS(t *testing.T) {
	exe := &fstest.MapFile{Mode: 0o755}
	mac := fstest.MapFS{"usr/bin/sandbox-exec": exe, "usr/bin/log": exe}
	for _, tc := range []struct {
		name, settings string
		want           []string
	}{
		{"no network", `{}`, []string{"TLS verification (trustd)  not needed"}},
		{"network", `{"network": {"allowedDomains": ["github.com"]}}`, []string{`fail HTTPS with "x509: OSStatus -26276"`, "verdict: full sandbox"}},
		{"weaker network isolation", `{"network": {"allowedDomains": ["github.com"]}, "enableWeakerNetworkIsolation": true}`,
			[]string{"open (sandbox.enableWeakerNetworkIsolation)"}},
		{"bad settings", `{"network": `, []string{"not known: the settings could not be read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, ws := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(home, ".srt-settings.json"), []byte(tc.settings), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", "")
			t.Setenv("CLAUDE_CONFIG_DIR", "")
			t.Chdir(ws)
			var out, errOut bytes.Buffer
			cmd := &cli.Command{Name: "doctor", Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}},
				Action: func(_ context.Context, c *cli.Command) error {
					return doctorMacOS(c, func(name string) (fs.FileInfo, error) { return fs.Stat(mac, strings.TrimPrefix(name, "/")) }, &out, &errOut)
				}}
			if err := cmd.Run(context.Background(), []string{"doctor"}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("doctor's report lacks %q:\n%s%s", w, out.String(), errOut.String())
				}
			}
		})
	}
}
