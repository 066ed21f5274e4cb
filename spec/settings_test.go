package spec

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/rogpeppe/go-internal/txtar"

	"cordon.dev/cordon/policy"
)

// TestSettings compiles settings sets into specs. Each testdata/settings
// archive holds the files of a host (home/u/..., home/u/ws/..., etc/...)
// (a file holding "symlink: TARGET" is a symlink to TARGET)
// and optionally an "args" file with command line flags, one per line;
// the golden file holds either the error (one line, file:line:col) or the
// report (every value and its source, what was ignored) and the compiled
// mounts, environment and annotations. The workspace is /home/u/ws, the
// home /home/u, the current directory the workspace.
func TestSettings(t *testing.T) {
	archives, err := filepath.Glob("testdata/settings/*.txtar")
	if err != nil || len(archives) < 20 {
		t.Fatalf("want at least 20 settings sets, have %d (%v)", len(archives), err)
	}
	for _, file := range archives {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			fsys := host()
			var flags []string
			for _, f := range ar.Files {
				if f.Name == "args" {
					flags = strings.Fields(string(f.Data))
					continue
				}
				fsys[f.Name] = &fstest.MapFile{Data: f.Data, Mode: 0o644}
				if target, ok := strings.CutPrefix(string(f.Data), "symlink: "); ok {
					fsys[f.Name] = &fstest.MapFile{Data: []byte(strings.TrimSpace(target)), Mode: fs.ModeSymlink | 0o777}
				}
				if strings.HasSuffix(f.Name, "/") {
					fsys[strings.TrimSuffix(f.Name, "/")] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
					delete(fsys, f.Name)
				}
			}
			o := policy.LoadOptions{
				Workspace: "/home/u/ws", Cwd: "/home/u/ws", Home: "/home/u", FS: fsys,
				ManagedFiles: []string{"/etc/cordon/managed-settings.json", "/etc/claude-code/managed-settings.json"},
			}
			for i := 0; i+1 < len(flags); i += 2 {
				v := flags[i+1]
				switch flags[i] {
				case "--settings":
					o.Settings = append(o.Settings, v)
				case "--allow-write":
					o.Flags.AllowWrite = append(o.Flags.AllowWrite, v)
				case "--allow-read":
					o.Flags.AllowRead = append(o.Flags.AllowRead, v)
				case "--deny-read":
					o.Flags.DenyRead = append(o.Flags.DenyRead, v)
				case "--deny-write":
					o.Flags.DenyWrite = append(o.Flags.DenyWrite, v)
				case "--allow-domain":
					o.Flags.AllowDomain = append(o.Flags.AllowDomain, v)
				case "--deny-domain":
					o.Flags.DenyDomain = append(o.Flags.DenyDomain, v)
				case "--mode":
					o.Flags.Mode = v
				default:
					t.Fatalf("unknown flag %s in args", flags[i])
				}
			}
			var out bytes.Buffer
			pol, err := policy.Load(o)
			if err == nil {
				req := request("make", "test")
				req.Cwd = "/home/u/ws"
				req.FS = fsys
				var s *specs.Spec
				s, err = Compile(pol, req, amd64)
				if err == nil {
					writeSettingsGolden(&out, pol, s)
				}
			}
			if err != nil {
				out.WriteString("error: " + err.Error() + "\n")
			}
			golden(t, "settings/"+name, out.Bytes())
		})
	}
}

func writeSettingsGolden(out *bytes.Buffer, pol *policy.Policy, s *specs.Spec) {
	type mount struct {
		Destination, Type, Source string
		Options                   string
	}
	var ms []mount
	for _, m := range s.Mounts {
		switch m.Destination {
		case "/proc", "/dev", "/dev/pts", "/dev/shm", "/sys", "/tmp", "/.cordon/cordon":
			continue
		}
		ms = append(ms, mount{m.Destination, m.Type, m.Source, strings.Join(m.Options, ",")})
	}
	var env []string
	for _, e := range s.Process.Env {
		if !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	var creds *policy.Credentials
	if c := pol.Credentials; len(c.Masked) > 0 {
		creds = &c
	}
	data, _ := json.MarshalIndent(struct {
		Trusted     bool
		Mode        string
		Credentials *policy.Credentials `json:",omitempty"`
		Report      *policy.Report
		Sandbox     policy.Sandbox
		Network     policy.Network
		Limits      policy.Limits
		Permissions policy.Permissions
		Mounts      []mount
		Env         []string
		Args        []string
		Annotations map[string]string
	}{pol.Trusted, pol.Mode.String(), creds, pol.Report, pol.Sandbox, pol.Network, pol.Limits, pol.Permissions, ms, env, s.Process.Args, s.Annotations}, "", "  ")
	out.Write(data)
	out.WriteByte('\n')
}

// TestSettingsArchivesAreValid keeps the JSON files of the sets that are
// meant to load parseable by encoding/json too.
func TestSettingsArchivesAreValid(t *testing.T) {
	archives, _ := filepath.Glob("testdata/settings/*.txtar")
	for _, file := range archives {
		if strings.Contains(file, "error-") {
			continue
		}
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if strings.HasSuffix(f.Name, ".json") && !json.Valid(f.Data) {
				t.Errorf("%s: %s is not valid JSON", file, f.Name)
			}
		}
	}
	_ = os.Stdout
}
