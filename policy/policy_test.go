package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want Mode
	}{
		{"read-only", ReadOnly}, {"plan", ReadOnly}, {"ReadOnly", ReadOnly},
		{"workspace-write", WorkspaceWrite}, {"default", WorkspaceWrite}, {"acceptEdits", WorkspaceWrite}, {"dontAsk", WorkspaceWrite},
		{"danger-full-access", DangerFullAccess},
		{"prompt", Prompt},
		{"allow", Allow}, {"bypassPermissions", Allow},
	}
	for _, tc := range tests {
		got, err := ParseMode(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "readonly-ish", "root"} {
		if _, err := ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) accepted it", bad)
		}
	}
}

func TestModeStringRoundTrip(t *testing.T) {
	for m := ReadOnly; m <= Allow; m++ {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%v.String()) = %v, %v", m, got, err)
		}
	}
}

func TestExpandPath(t *testing.T) {
	p := &Policy{Workspace: "/home/u/ws", Home: "/home/u"}
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "~", want: "/home/u"},
		{in: "~/.ssh", want: "/home/u/.ssh"},
		{in: "~/.config/../.ssh", want: "/home/u/.ssh"},
		{in: "//etc/hosts", want: "/etc/hosts"},
		{in: "/etc/hosts", want: "/etc/hosts"},
		{in: "/etc//hosts/", want: "/etc/hosts"},
		{in: "build", want: "/home/u/ws/build"},
		{in: "./build", want: "/home/u/ws/build"},
		{in: "../sibling", want: "/home/u/sibling"},
		{in: "", bad: true},
		{in: "~root/.ssh", bad: true},
	}
	for _, tc := range tests {
		got, err := p.ExpandPath(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ExpandPath(%q) = %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ExpandPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestDefault(t *testing.T) {
	p, err := Default("/home/u/ws/", "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	if p.Workspace != "/home/u/ws" || p.Mode != WorkspaceWrite {
		t.Errorf("workspace %q mode %v", p.Workspace, p.Mode)
	}
	want := []string{
		"/home/u/.ssh", "/home/u/.aws", "/home/u/.gnupg", "/home/u/.config/gcloud", "/home/u/.kube",
		"/home/u/.docker/config.json", "/home/u/.netrc", "/home/u/.npmrc", "/home/u/.pypirc", "/home/u/.git-credentials",
	}
	if diff := cmp.Diff(want, p.Filesystem.DenyRead); diff != "" {
		t.Errorf("DenyRead (-want +got):\n%s", diff)
	}
	if len(p.Network.AllowedDomains) != 0 {
		t.Errorf("the default policy allows network: %v", p.Network.AllowedDomains)
	}
	root, err := Default("/srv/ws", "/root")
	if err != nil {
		t.Fatal(err)
	}
	if root.Filesystem.DenyRead[0] != "/root/.ssh" {
		t.Errorf("root's credential stores are not denied: %v", root.Filesystem.DenyRead)
	}
}

func TestEnvFilter(t *testing.T) {
	p, err := Default("/w", "/h")
	if err != nil {
		t.Fatal(err)
	}
	in := []string{
		"PATH=/usr/bin", "HOME=/h", "LANG=C.UTF-8", "MY_SETTING=1", "TOKENIZER=x", "SECRETARY=1",
		"GITHUB_TOKEN=ghp", "gh_token=lower", "NPM_TOKEN=n", "CI_JOB_TOKEN_FILE=x", "OPENAI_API_KEY=k",
		"ANTHROPIC_API_KEY=k", "AWS_SECRET_ACCESS_KEY=s", "AWS_SESSION_TOKEN=s", "AWS_ACCESS_KEY_ID=id",
		"SSH_AUTH_SOCK=/s", "DB_PASSWORD=p", "STRIPE_SECRET=s", "CLIENT_SECRET_ID=s", "MY_PRIVATE_KEY=k",
		"GOOGLE_APPLICATION_CREDENTIALS=/k.json", "_LIBCONTAINER_INITPIPE=3", "NOEQUALS", "=empty",
	}
	want := []string{
		"PATH=/usr/bin", "HOME=/h", "LANG=C.UTF-8", "MY_SETTING=1", "TOKENIZER=x", "SECRETARY=1",
		"AWS_ACCESS_KEY_ID=id",
	}
	if diff := cmp.Diff(want, p.Env.Filter(in)); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}

	e := Env{Deny: []string{"*_TOKEN"}, Allow: []string{"CI_TOKEN"}, Set: map[string]string{"B": "2", "A": "1", "HOME": "/sandbox"}}
	got := e.Filter([]string{"CI_TOKEN=ok", "X_TOKEN=no", "HOME=/h", "KEEP=1"})
	if diff := cmp.Diff([]string{"CI_TOKEN=ok", "KEEP=1", "A=1", "B=2", "HOME=/sandbox"}, got); diff != "" {
		t.Errorf("Filter with allow and set (-want +got):\n%s", diff)
	}
}

func FuzzExpandPath(f *testing.F) {
	for _, s := range []string{"~", "~/a", "//x", "/a/../b", "rel", "../..", "~x", ""} {
		f.Add(s)
	}
	p := &Policy{Workspace: "/home/u/ws", Home: "/home/u"}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := p.ExpandPath(raw)
		if err != nil {
			return
		}
		if got == "" || got[0] != '/' {
			t.Fatalf("ExpandPath(%q) = %q, not absolute", raw, got)
		}
	})
}
