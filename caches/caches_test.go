package caches

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func byName(cs []Cache) map[string]Cache {
	out := map[string]Cache{}
	for _, c := range cs {
		out[c.Name] = c
	}
	return out
}

func TestFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		goos string
		want map[string]Cache // the caches checked, by name; a zero Cache: absent
	}{
		{
			name: "defaults",
			goos: "linux",
			want: map[string]Cache{
				"npm":            {Name: "npm", Tool: "npm", Path: "/home/u/.npm", Var: "npm_config_cache"},
				"go-path":        {Name: "go-path", Tool: "go", Path: "/home/u/go/pkg", Var: "GOPATH"},
				"go-mod":         {},
				"go-build":       {Name: "go-build", Tool: "go", Path: "/home/u/.cache/go-build", Var: "GOCACHE"},
				"pip":            {Name: "pip", Tool: "pip", Path: "/home/u/.cache/pip", Var: "PIP_CACHE_DIR"},
				"pip-user-bin":   {Name: "pip-user-bin", Tool: "pip", Path: "/home/u/.local/bin"},
				"pip-user":       {Name: "pip-user", Tool: "pip", Var: "PYTHONUSERBASE", Instead: []string{"pip-user-lib", "pip-user-bin"}},
				"cargo-registry": {Name: "cargo-registry", Tool: "cargo", Path: "/home/u/.cargo/registry"},
				"gradle-caches":  {Name: "gradle-caches", Tool: "gradle", Path: "/home/u/.gradle/caches"},
				"maven":          {Name: "maven", Tool: "maven", Path: "/home/u/.m2/repository", Var: "MAVEN_OPTS"},
				"pnpm-store":     {Name: "pnpm-store", Tool: "pnpm", Path: "/home/u/.local/share/pnpm/store", Var: "npm_config_store_dir"},
			},
		},
		{
			name: "the caller's variables",
			goos: "linux",
			env: []string{"XDG_CACHE_HOME=/c", "GOPATH=/gp:/other", "GOMODCACHE=/mods", "CARGO_HOME=/cargo",
				"npm_config_cache=relative/ignored", "GOCACHE=off", "GRADLE_USER_HOME=/g"},
			want: map[string]Cache{
				"npm":            {Name: "npm", Tool: "npm", Path: "/home/u/.npm", Var: "npm_config_cache"},
				"go-path":        {Name: "go-path", Tool: "go", Path: "/gp/pkg", Var: "GOPATH"},
				"go-mod":         {Name: "go-mod", Tool: "go", Path: "/mods", Var: "GOMODCACHE"},
				"go-build":       {},
				"pip":            {Name: "pip", Tool: "pip", Path: "/c/pip", Var: "PIP_CACHE_DIR"},
				"cargo-registry": {Name: "cargo-registry", Tool: "cargo", Path: "/cargo/registry"},
				"gradle-wrapper": {Name: "gradle-wrapper", Tool: "gradle", Path: "/g/wrapper"},
			},
		},
		{
			name: "a module cache in GOPATH/pkg is GOPATH's",
			goos: "linux",
			env:  []string{"GOMODCACHE=/home/u/go/pkg/mod"},
			want: map[string]Cache{"go-mod": {}},
		},
		{
			// One cache inside another is the outer one's; two the same
			// are one.
			name: "nested and equal",
			goos: "linux",
			env:  []string{"npm_config_cache=/home/u/.cache", "YARN_CACHE_FOLDER=/home/u/.cache"},
			want: map[string]Cache{
				"npm":      {Name: "npm", Tool: "npm", Path: "/home/u/.cache", Var: "npm_config_cache"},
				"yarn":     {Name: "yarn", Tool: "yarn", Var: "YARN_CACHE_FOLDER"},
				"pip":      {Name: "pip", Tool: "pip", Var: "PIP_CACHE_DIR"},
				"go-build": {Name: "go-build", Tool: "go", Var: "GOCACHE"},
			},
		},
		{
			name: "macOS",
			goos: "darwin",
			want: map[string]Cache{
				"pip":      {Name: "pip", Tool: "pip", Path: "/home/u/Library/Caches/pip", Var: "PIP_CACHE_DIR"},
				"go-build": {Name: "go-build", Tool: "go", Path: "/home/u/Library/Caches/go-build", Var: "GOCACHE"},
				"yarn":     {Name: "yarn", Tool: "yarn", Path: "/home/u/Library/Caches/Yarn", Var: "YARN_CACHE_FOLDER"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := byName(For("/home/u", tc.env, tc.goos))
			for name, want := range tc.want {
				if diff := cmp.Diff(want, got[name]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

func TestRedirect(t *testing.T) {
	env := []string{"MAVEN_OPTS=-Xmx1g"}
	for _, tc := range []struct {
		c    Cache
		want string
	}{
		{Cache{Var: "npm_config_cache"}, "npm_config_cache=/d"},
		{Cache{Var: "MAVEN_OPTS"}, "MAVEN_OPTS=-Xmx1g -Dmaven.repo.local=/d"},
	} {
		if got := tc.c.Redirect("/d", env); got != tc.want {
			t.Errorf("Redirect = %q, want %q", got, tc.want)
		}
	}
	if got := (Cache{Var: "MAVEN_OPTS"}).Redirect("/d", nil); got != "MAVEN_OPTS=-Dmaven.repo.local=/d" {
		t.Errorf("Redirect without MAVEN_OPTS = %q", got)
	}
}
