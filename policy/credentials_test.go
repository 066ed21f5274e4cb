package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// srtFile is a sandbox-runtime settings file with the given network and
// credentials blocks.
func srtFile(allowed, creds string) string {
	return `{"network": {"allowedDomains": ` + allowed + `, "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
	"credentials": ` + creds + `}`
}

// TestCredentials: the credentials block as sandbox-runtime reads it. A
// masked secret gets its hosts (injectHosts, or every allowed domain,
// ports dropped), a deny anywhere wins over a mask, a masked file stays
// in denyRead (the runtime binds its fake over it), and the managed
// settings' deny of a file holds over a mask below them.
func TestCredentials(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		trusted bool
		want    Credentials
		// denyRead and envDeny the policy must hold (a masked file stays
		// hidden until the runtime binds its fake over it)
		denyRead, envDeny []string
		ignored           []string // keys of the report's ignored entries
	}{{
		name: "mask env and file",
		files: map[string]string{"home/u/.srt-settings.json": srtFile(`["github.com", "*.github.com:443", "registry.npmjs.org"]`,
			`{"envVars": [{"name": "GH_TOKEN", "mode": "mask"}, {"name": "NPM_TOKEN", "mode": "mask", "injectHosts": ["registry.npmjs.org"]}],
			  "files": [{"path": "~/.ssh/id_token", "mode": "mask", "extract": "password (\\S+)", "maskDuplicates": true}, {"path": "~/.aws/credentials", "mode": "deny"}]}`)},
		want: Credentials{
			Masked: []Credential{
				{Env: "GH_TOKEN", InjectHosts: []string{"github.com", "*.github.com", "registry.npmjs.org"}, Source: "/home/u/.srt-settings.json:2:30"},
				{Env: "NPM_TOKEN", InjectHosts: []string{"registry.npmjs.org"}, Source: "/home/u/.srt-settings.json:2:68"},
				{File: "/home/u/.ssh/id_token", Extract: `password (\S+)`, MaskDuplicates: true, OnExtractNoMatch: "deny",
					InjectHosts: []string{"github.com", "*.github.com", "registry.npmjs.org"}, Source: "/home/u/.srt-settings.json:3:16"},
			},
			SigV4: SigV4{"deny", "deny", "deny"},
		},
		denyRead: []string{"/home/u/.aws/credentials", "/home/u/.aws", "/home/u/.ssh/id_token"},
		envDeny:  []string{"GH_TOKEN", "NPM_TOKEN"},
	}, {
		name: "deny wins over mask",
		files: map[string]string{
			"home/u/.srt-settings.json":    srtFile(`["api.example.com"]`, `{"envVars": [{"name": "API_KEY", "mode": "mask"}]}`),
			"home/u/.claude/settings.json": `{"sandbox": {"credentials": {"envVars": [{"name": "API_KEY", "mode": "deny"}]}}}`,
		},
		want:    Credentials{SigV4: SigV4{"deny", "deny", "deny"}},
		envDeny: []string{"API_KEY"},
		ignored: []string{"credentials mode mask"},
	}, {
		name: "managed deny holds over a user mask",
		files: map[string]string{
			"home/u/.srt-settings.json":        srtFile(`["api.example.com"]`, `{"files": [{"path": "/etc/tok", "mode": "mask"}]}`),
			"etc/cordon/managed-settings.json": `{"sandbox": {"filesystem": {"denyRead": ["/etc"]}}}`,
		},
		want:     Credentials{SigV4: SigV4{"deny", "deny", "deny"}},
		denyRead: []string{"/etc"},
		ignored:  []string{"credentials mode mask"},
	}, {
		name: "untrusted workspace masks: denied instead",
		files: map[string]string{
			"home/u/.srt-settings.json": srtFile(`["api.example.com"]`, `{}`),
			"ws/.claude/settings.json":  `{"sandbox": {"credentials": {"envVars": [{"name": "SVC_KEY", "mode": "mask"}], "files": [{"path": "/etc/tok", "mode": "mask"}], "allowPlaintextInject": true}}}`,
		},
		want:     Credentials{SigV4: SigV4{"deny", "deny", "deny"}},
		denyRead: []string{"/etc/tok"},
		envDeny:  []string{"SVC_KEY"},
		ignored:  []string{"credentials mode mask", "credentials mode mask", "credentials.allowPlaintextInject"},
	}, {
		name: "trusted workspace masks",
		files: map[string]string{
			"home/u/.srt-settings.json": srtFile(`["api.example.com"]`, `{}`),
			"ws/.claude/settings.json":  `{"sandbox": {"credentials": {"envVars": [{"name": "SVC_KEY", "mode": "mask", "decode": "jwt", "maskClaims": ["secret"], "onExtractNoMatch": "error"}]}}}`,
		},
		trusted: true,
		want: Credentials{
			Masked: []Credential{{Env: "SVC_KEY", Decode: "jwt", MaskClaims: []string{"secret"}, OnExtractNoMatch: "error",
				InjectHosts: []string{"api.example.com"}, Source: "/ws/.claude/settings.json:1:42"}},
			SigV4: SigV4{"deny", "deny", "deny"},
		},
	}, {
		name: "aws trio paired",
		files: map[string]string{"home/u/.srt-settings.json": srtFile(`["*.amazonaws.com"]`,
			`{"envVars": [{"name": "AWS_ACCESS_KEY_ID", "mode": "mask"}, {"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask"}, {"name": "AWS_SESSION_TOKEN", "mode": "mask"}],
			  "sigv4": {"presigned": "passthrough"}}`)},
		want: Credentials{
			Masked: []Credential{
				{Env: "AWS_ACCESS_KEY_ID", InjectHosts: []string{"*.amazonaws.com"}, Source: "/home/u/.srt-settings.json:2:30"},
				{Env: "AWS_SECRET_ACCESS_KEY", InjectHosts: []string{"*.amazonaws.com"}, Source: "/home/u/.srt-settings.json:2:77"},
				{Env: "AWS_SESSION_TOKEN", InjectHosts: []string{"*.amazonaws.com"}, Source: "/home/u/.srt-settings.json:2:128"},
			},
			AWSPairs: []AWSPair{{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}},
			SigV4:    SigV4{"deny", "passthrough", "deny"},
		},
	}, {
		name: "explicit pair",
		files: map[string]string{"home/u/.srt-settings.json": srtFile(`["s3.example.com"]`,
			`{"envVars": [{"name": "K", "mode": "mask"}, {"name": "S", "mode": "mask"}], "awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S"}], "allowPlaintextInject": true}`)},
		want: Credentials{
			Masked: []Credential{
				{Env: "K", InjectHosts: []string{"s3.example.com"}, Source: "/home/u/.srt-settings.json:2:30"},
				{Env: "S", InjectHosts: []string{"s3.example.com"}, Source: "/home/u/.srt-settings.json:2:61"},
			},
			AllowPlaintextInject: true,
			AWSPairs:             []AWSPair{{AccessKeyID: "K", SecretAccessKey: "S"}},
			SigV4:                SigV4{"deny", "deny", "deny"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			if tc.trusted {
				fsys["home/u/.config/cordon/settings.json"] = &fstest.MapFile{Data: []byte(`{"cordon": {"trustedWorkspaces": ["/ws"]}}`)}
			}
			p, err := Load(LoadOptions{Workspace: "/ws", Cwd: "/ws", Home: "/home/u", FS: fsys, ManagedFiles: []string{"/etc/cordon/managed-settings.json"}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, p.Credentials); diff != "" {
				t.Errorf("credentials (-want +got):\n%s", diff)
			}
			for _, d := range tc.denyRead {
				if !slices.Contains(p.Filesystem.DenyRead, d) {
					t.Errorf("denyRead %v lacks %s", p.Filesystem.DenyRead, d)
				}
			}
			for _, e := range tc.envDeny {
				if !slices.Contains(p.Env.Deny, e) {
					t.Errorf("env deny %v lacks %s", p.Env.Deny, e)
				}
			}
			var ignored []string
			for _, ig := range p.Report.Ignored {
				if strings.HasPrefix(ig.Key, "credentials") || ig.Key == "sandbox.filesystem.denyRead" {
					ignored = append(ignored, ig.Key)
				}
			}
			if diff := cmp.Diff(tc.ignored, ignored); diff != "" {
				t.Errorf("ignored (-want +got):\n%s\n%+v", diff, p.Report.Ignored)
			}
		})
	}
}

// TestCredentialsRefused: a credentials block that cannot mean what it
// says refuses the settings, with the position of the cause.
func TestCredentialsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, allowed, creds, want string
	}{
		{"inject host not allowed", `["github.com"]`, `{"envVars": [{"name": "T", "mode": "mask", "injectHosts": ["api.github.com"]}]}`,
			`:2:76: injectHosts entry "api.github.com" is not reachable through allowedDomains`},
		{"inject wildcard under exact", `["github.com"]`, `{"envVars": [{"name": "T", "mode": "mask", "injectHosts": ["*.github.com"]}]}`,
			`:2:76: injectHosts entry "*.github.com" is not reachable`},
		{"inject host with port", `["github.com"]`, `{"envVars": [{"name": "T", "mode": "mask", "injectHosts": ["github.com:443"]}]}`,
			`:2:76: credentials.envVars[].injectHosts: "github.com:443": injectHosts names hosts, without a port`},
		{"empty inject hosts", `["github.com"]`, `{"envVars": [{"name": "T", "mode": "mask", "injectHosts": []}]}`,
			`:2:75: credentials.envVars[].injectHosts is empty`},
		{"bad mode", `[]`, `{"envVars": [{"name": "T", "mode": "hide"}]}`, `:2:52: credentials.envVars[].mode must be "deny" or "mask", not "hide"`},
		{"bad name", `[]`, `{"envVars": [{"name": "A-B", "mode": "mask"}]}`, `:2:39: credentials.envVars[].name: "A-B" is not a variable name`},
		{"no mode", `[]`, `{"envVars": [{"name": "T"}]}`, `:2:30: credentials.envVars[] needs a name and a mode`},
		{"unknown key", `[]`, `{"envVars": [{"name": "T", "mode": "mask", "injecthosts": ["x"]}]}`, `unknown key "injecthosts" in credentials.envVars[] (did you mean "injectHosts"?)`},
		{"extract without group", `[]`, `{"envVars": [{"name": "T", "mode": "mask", "extract": "token=\\S+"}]}`, `has no group: its first group is the secret`},
		{"extract lookahead", `[]`, `{"envVars": [{"name": "T", "mode": "mask", "extract": "(?=x)(a)"}]}`, `is not a regular expression cordon reads (RE2 syntax`},
		{"maskClaims without decode", `[]`, `{"envVars": [{"name": "T", "mode": "mask", "maskClaims": ["k"]}]}`, `credentials.envVars[].maskClaims needs decode`},
		{"empty maskClaims", `[]`, `{"envVars": [{"name": "T", "mode": "mask", "decode": "jwt", "maskClaims": []}]}`, `maskClaims is empty`},
		{"decode other", `[]`, `{"envVars": [{"name": "T", "mode": "mask", "decode": "base64"}]}`, `decode must be "jwt", not "base64"`},
		{"no match other", `[]`, `{"envVars": [{"name": "T", "mode": "mask", "onExtractNoMatch": "skip"}]}`, `onExtractNoMatch must be "warn", "deny" or "error"`},
		{"mask a directory", `[]`, `{"files": [{"path": "~/.aws/", "mode": "mask"}]}`, `is a directory: mode "mask" applies to one file`},
		{"pair of unmasked", `[]`, `{"envVars": [{"name": "K", "mode": "mask"}], "awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S"}]}`,
			`credentials.awsPairs: "S" is not a credentials.envVars entry with mode "mask"`},
		{"pair of structured", `[]`, `{"envVars": [{"name": "K", "mode": "mask"}, {"name": "S", "mode": "mask", "extract": "(x)"}], "awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S"}]}`,
			`"S" is not a credentials.envVars entry with mode "mask" and without extract or decode`},
		{"pair twice", `[]`, `{"envVars": [{"name": "K", "mode": "mask"}, {"name": "S", "mode": "mask"}], "awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S"}, {"accessKeyIdVar": "K", "secretAccessKeyVar": "S"}]}`,
			`"K" is in more than one slot`},
		{"sigv4 other", `[]`, `{"sigv4": {"streaming": "allow"}}`, `credentials.sigv4.streaming must be "deny" or "passthrough"`},
		{"sigv4 unknown", `[]`, `{"sigv4": {"sigv4A": "deny"}}`, `unknown key "sigv4A" in credentials.sigv4 (did you mean "sigv4a"?)`},
		{"stale block injectHosts", `[]`, `{"injectHosts": ["x"]}`, `unknown key "injectHosts" in credentials`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"home/u/.srt-settings.json": {Data: []byte(srtFile(tc.allowed, tc.creds))}}
			_, err := Load(LoadOptions{Workspace: "/ws", Cwd: "/ws", Home: "/home/u", FS: fsys, ManagedFiles: []string{}})
			var se *SettingsError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "/home/u/.srt-settings.json:") {
				t.Fatalf("error %v, want a SettingsError containing %q", err, tc.want)
			}
		})
	}
}
