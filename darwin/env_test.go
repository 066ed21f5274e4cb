package darwin

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/policy"
)

func TestEnviron(t *testing.T) {
	p, err := policy.Default(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	caller := []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghp_x", "TMPDIR=/var/folders/x/T/", "LANG=en_US.UTF-8", "IS_SANDBOX=0", "GIT_TEMPLATE_DIR=/opt/templates"}
	got := Environ(p, Request{TempDir: "/private/tmp/cordon-run1"}, caller)
	want := []string{
		"PATH=/usr/bin:/bin", "LANG=en_US.UTF-8",
		"CORDON_SANDBOX=1", "SANDBOX_RUNTIME=1", "IS_SANDBOX=1", "GIT_TEMPLATE_DIR=",
		"TMPDIR=/private/tmp/cordon-run1", "CLANG_MODULE_CACHE_PATH=/private/tmp/cordon-run1/clang-module-cache",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
