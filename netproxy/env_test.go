package netproxy

import (
	"slices"
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	env := Env(3128, 1080, "/.cordon/cordon")
	for _, want := range []string{
		"HTTP_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
		"ALL_PROXY=http://127.0.0.1:3128", "all_proxy=http://127.0.0.1:3128", "SOCKS_PROXY=socks5h://127.0.0.1:1080", "no_proxy=localhost,127.0.0.1,::1",
		"GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='/.cordon/cordon proxy-connect --proxy 127.0.0.1:3128 %h %p'",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("Env lacks %s", want)
		}
	}
	// the ProxyCommand goes through two shells: a path that needs quoting is left out
	for _, path := range []string{"", "/my dir/cordon", "/x;rm -rf ~/cordon", "/a'b"} {
		if cmd := SSHProxyCommand(path, 3128); cmd != "" {
			t.Errorf("SSHProxyCommand(%q) = %q", path, cmd)
		}
		for _, kv := range Env(3128, 1080, path) {
			if strings.HasPrefix(kv, "GIT_SSH_COMMAND=") {
				t.Errorf("Env with cordon at %q sets %s", path, kv)
			}
		}
	}
}
