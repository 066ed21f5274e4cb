package cordon

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "cordon.dev/cordon"

// allowed lists, for each package, the packages of this module it may
// import (docs/architecture.md, "Packages, and what each may import").
var allowed = map[string][]string{
	"policy":       {"policy/shell", "internal/paths"},
	"policy/shell": {"internal/paths"},
	"spec":         {"policy", "mounts", "seccomp", "probe", "netproxy", "internal/paths"},
	"mounts":       {"internal/dirent", "internal/paths", "internal/gitconfig", "internal/access"},
	"seccomp":      {},
	"netproxy":     {"policy", "netproxy/mask"},
	// netproxy/mask: a run's masked secrets, their fakes and their
	// substitution on the wire (a leaf under netproxy).
	"netproxy/mask": {},
	"probe":         {"internal/paths"},
	"runtime":       {"spec", "seccomp", "netproxy", "probe", "caches", "internal/dirent", "internal/paths", "internal/access", "internal/gitconfig"},
	"darwin":        {"policy", "internal/paths", "internal/gitconfig"},
	// serve: cordon serve's daemon, its pool, its protocol and its client.
	"serve": {"runtime"},
	// internal/dirent: getdents for the walks below writable roots (a
	// leaf).
	"internal/dirent": {},
	// internal/paths: whether one path is inside another, for every layer
	// (a leaf).
	"internal/paths": {},
	// internal/gitconfig: a repository's core.hooksPath and included
	// files, for mounts and darwin, and which configs a sandboxed command
	// may write, for runtime (a leaf).
	"internal/gitconfig": {},
	// caches: where package managers keep what they download, and how
	// each is made writable without the host's.
	"caches": {"internal/paths"},
	// internal/gitindex: the paths git's index lists, for the CLI's
	// notice of tracked files the policy hides (a leaf).
	"internal/gitindex": {},
	// internal/access: what a process without capabilities may do to a
	// file by its bits, for mounts and the runtime's scrub (a leaf).
	"internal/access": {},
}

// unruled are the directories that may import any package of the module:
// the CLI, the module's own doc, the end-to-end tests and their tools.
var unruled = []string{".", "cmd/cordon", "integration", "integration/bench", "integration/claudecode"}

// libcontainer's packages; only runtime may import them (tests of other
// packages may, to compare against it).
const libcontainer = "github.com/opencontainers/runc/"

type pkg struct {
	dir     string
	doc     bool
	imports map[string]bool
}

// packages parses the non-test Go files of every package in the module,
// whatever their build constraints.
func packages(t *testing.T) map[string]*pkg {
	t.Helper()
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &pkg{dir: dir, imports: map[string]bool{}}
			pkgs[dir] = p
		}
		p.doc = p.doc || f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" ") ||
			f.Doc != nil && f.Name.Name == "main" && strings.HasPrefix(f.Doc.Text(), "Command ")
		for _, imp := range f.Imports {
			p.imports[strings.Trim(imp.Path.Value, `"`)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func TestImportBoundaries(t *testing.T) {
	for dir, p := range packages(t) {
		for imp := range p.imports {
			if strings.HasPrefix(imp, libcontainer) && dir != "runtime" {
				t.Errorf("%s imports %s: only runtime may import libcontainer", dir, imp)
			}
			rules, ruled := allowed[dir]
			if !ruled && !slices.Contains(unruled, dir) {
				t.Errorf("%s has no import rule: add it to allowed (and docs/architecture.md) or to unruled", dir)
				break
			}
			if !ruled || !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if target := strings.TrimPrefix(imp, module+"/"); !slices.Contains(rules, target) {
				t.Errorf("%s imports %s; docs/architecture.md allows %v", dir, target, rules)
			}
		}
	}
}

func TestPackageDocs(t *testing.T) {
	for dir, p := range packages(t) {
		if !p.doc {
			t.Errorf("%s has no package doc comment", dir)
		}
	}
}

// TestDarwinBuildsWithoutLinux keeps the darwin package free of anything
// Linux-only: it must compile with GOOS=darwin and cgo off.
func TestDarwinBuildsWithoutLinux(t *testing.T) {
	darwin := packages(t)["darwin"]
	if darwin == nil {
		t.Skip("no darwin package yet")
	}
	for imp := range darwin.imports {
		if strings.Contains(imp, "golang.org/x/sys/unix") || strings.HasPrefix(imp, libcontainer) {
			t.Errorf("darwin imports %s", imp)
		}
	}
}
