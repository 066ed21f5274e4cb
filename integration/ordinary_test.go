//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The ordinary-work suite (issue 20): the commands a coding agent runs
// every day, as it types them, each in a fresh project and a fresh home
// whose tool caches are empty (~/.npm, ~/go, ~/.cache). Every case runs
// twice, each time in projects and homes of its own: unsandboxed first —
// a case that fails there is broken, and fails the test without counting
// as a success — then under cordon's default policy, with only the
// domains of the package registries this machine's npm and go are
// configured to use allowed. Cases a sandbox should refuse belong to the
// escape suite, not here: every case must succeed.

// ordinaryCase is one piece of ordinary work.
type ordinaryCase struct {
	name string
	// setup makes the project the agent works in (sources, a repository
	// with history, a lockfile, a repository next to the project), with
	// bash -c in the project, as the caller, outside any sandbox; its
	// HOME is a scratch one, so that the caches of the case's own stay
	// empty, and $CASE_HOME is the case's.
	setup string
	// cmd is the command as the agent types it: bash -c CMD in the project.
	cmd   string
	stdin string
	// want are what stdout must hold; {home}, {project} and {user} stand
	// for the case's home, project and user name.
	want []string
	// check runs after the command, like setup but with the case's HOME:
	// the work is there, on the host, where the next command finds it.
	check string
	// slow: the case downloads or compiles enough to need minutes on a
	// busy machine.
	slow bool
}

// The projects the cases start from.
const (
	// pyProject is a small Python service with a shell script and notes.
	pyProject = `mkdir -p src/app tests scripts
cat > src/app/__init__.py <<'EOF'
import os

DEBUG = True
# TODO: read the port from the environment
PORT = 8080


def greet(name):
    return "hello, " + name
EOF
cat > src/app/store.py <<'EOF'
import json


def load(path):
    # TODO: handle a missing file
    with open(path) as f:
        return json.load(f)
EOF
cat > tests/test_app.py <<'EOF'
import sys
import unittest

sys.path.insert(0, "src")
from app import greet


class GreetTest(unittest.TestCase):
    def test_greet(self):
        self.assertEqual(greet("ada"), "hello, ada")


if __name__ == "__main__":
    unittest.main()
EOF
printf '#!/bin/sh\nset -e\necho "running checks"\n' > scripts/check.sh
chmod 755 scripts/check.sh
printf '[server]\nhost = 127.0.0.1\nport = 8080\n' > config.ini
printf '# App\n\nA small service.\n' > README.md
printf '# Changelog\n\n- first release\n' > CHANGELOG.md
printf 'first note\nsecond note\n' > notes.txt
`
	// gitProject is pyProject committed to a repository, with a second
	// commit.
	gitProject = pyProject + `git init -q
git add -A
git commit -qm "Initial commit"
printf 'PORT = 8080\nHOST = "127.0.0.1"\n' > src/app/settings.py
git add -A
git commit -qm "Add settings"
`
	// libRepo is a repository in the user's home, outside the project
	// (which may lie under /tmp, where the sandbox shows only the
	// project).
	libRepo = `git init -q "$CASE_HOME/src/libfoo"
cd "$CASE_HOME/src/libfoo"
printf 'int foo(void) { return 42; }\n' > foo.c
git add -A
git commit -qm "Initial libfoo"
cd - >/dev/null
`
)

var ordinaryCases = []ordinaryCase{
	// JavaScript.
	{name: "npm init, install and test", slow: true,
		setup: `cat > test.js <<'EOF'
const isNumber = require('is-number');
const assert = require('assert');
assert.ok(isNumber(5));
assert.ok(isNumber('5'));
assert.ok(!isNumber('five'));
console.log('3 checks passed');
EOF
`,
		cmd:   `npm init -y && npm install is-number@7.0.0 && npm pkg set scripts.test="node test.js" && npm test`,
		want:  []string{"3 checks passed"},
		check: `test -f node_modules/is-number/package.json && grep -q '"is-number"' package.json && test -f package-lock.json`},
	{name: "npm ci from a lockfile", slow: true,
		setup: `cat > package.json <<'EOF'
{"name": "shop", "version": "1.0.0", "private": true, "dependencies": {"is-number": "7.0.0"}}
EOF
npm install --package-lock-only --no-audit --no-fund >/dev/null
`,
		cmd:   `npm ci && node -e "console.log('is a number:', require('is-number')('42'))"`,
		want:  []string{"is a number: true"},
		check: `test -f node_modules/is-number/index.js`},
	{name: "npx of an installed bin", slow: true,
		cmd:  `npm init -y >/dev/null && npm install --save-dev semver@7.6.3 && npx semver --range '^7.0.0' 6.2.0 7.6.3`,
		want: []string{"\n7.6.3\n"}},
	{name: "npm run of a package.json script",
		setup: `mkdir -p src
printf '# Hello\n' > src/index.md
cat > package.json <<'EOF'
{"name": "site", "version": "1.0.0", "private": true, "scripts": {"build": "node build.js"}}
EOF
cat > build.js <<'EOF'
const fs = require('fs');
fs.mkdirSync('dist', {recursive: true});
const md = fs.readFileSync('src/index.md', 'utf8');
fs.writeFileSync('dist/index.html', '<h1>' + md.replace(/^# /, '').trim() + '</h1>\n');
console.log('built dist/index.html');
EOF
`,
		cmd:   `npm run build && cat dist/index.html`,
		want:  []string{"built dist/index.html", "<h1>Hello</h1>"},
		check: `grep -q '<h1>Hello</h1>' dist/index.html`},
	{name: "node script that reads and writes files",
		setup: `mkdir -p data scripts
printf '[{"name":"ada","active":true},{"name":"bob","active":false},{"name":"cy","active":true}]\n' > data/users.json
cat > scripts/summarize.js <<'EOF'
const fs = require('fs');
const [input, output] = process.argv.slice(2);
const users = JSON.parse(fs.readFileSync(input, 'utf8'));
const report = {count: users.length, active: users.filter(u => u.active).map(u => u.name)};
fs.writeFileSync(output, JSON.stringify(report) + '\n');
EOF
`,
		cmd:   `node scripts/summarize.js data/users.json report.json && cat report.json`,
		want:  []string{`{"count":3,"active":["ada","cy"]}`},
		check: `grep -q '"count":3' report.json`},
	{name: "node's test runner",
		setup: `mkdir -p lib test
printf 'export function slug(s) {\n  return s.trim().toLowerCase().split(/\\s+/).join("-");\n}\n' > lib/slug.mjs
cat > test/slug.test.mjs <<'EOF'
import test from 'node:test';
import assert from 'node:assert/strict';
import { slug } from '../lib/slug.mjs';

test('slug joins words', () => assert.equal(slug(' Hello  Agent '), 'hello-agent'));
test('slug of one word', () => assert.equal(slug('Word'), 'word'));
EOF
`,
		cmd:  `node --test test/`,
		want: []string{"# pass 2", "# fail 0"}},
	{name: "a node dev server and a client",
		setup: `cat > server.js <<'EOF'
const http = require('http');
const server = http.createServer((req, res) => res.end('pong ' + req.url + '\n'));
server.listen(0, '127.0.0.1', () => {
  require('fs').writeFileSync('.port', String(server.address().port));
  console.log('listening');
});
EOF
`,
		cmd: `node server.js & server=$!
for i in $(seq 100); do [ -s .port ] && break; sleep 0.1; done
curl -fsS "http://127.0.0.1:$(cat .port)/health"
kill $server`,
		want: []string{"pong /health"}},

	// Go.
	{name: "go mod init, get, tidy, build and test", slow: true,
		setup: `cat > main.go <<'EOF'
package main

import (
	"fmt"

	"golang.org/x/example/hello/reverse"
)

func shout(s string) string { return reverse.String(s) + "!" }

func main() { fmt.Println(shout("hello")) }
EOF
cat > main_test.go <<'EOF'
package main

import "testing"

func TestShout(t *testing.T) {
	if got := shout("abc"); got != "cba!" {
		t.Fatalf("shout(abc) = %q", got)
	}
}
EOF
`,
		cmd:   `go mod init example.com/greet && go get golang.org/x/example/hello/reverse && go mod tidy && go build -o greet . && ./greet && go test ./...`,
		want:  []string{"olleh!", "ok  \texample.com/greet"},
		check: `test -x greet && grep -q golang.org/x/example/hello go.mod && test -s go.sum`},
	{name: "gofmt",
		setup: `printf 'package main\nimport "fmt"\nfunc main() {\nfmt.Println("hi")\n}\n' > main.go`,
		cmd:   `gofmt -l . && gofmt -w main.go && gofmt -l . | wc -l && head -3 main.go`,
		want:  []string{"main.go\n0\n", "\nimport \"fmt\"\n"},
		check: `grep -q '^	fmt.Println' main.go`},

	// git.
	{name: "git init and first commit", setup: pyProject,
		cmd:   `git init && git add -A && git commit -m "Initial commit" && git status --short --branch`,
		want:  []string{"## main"},
		check: `git log --format=%s | grep -qx "Initial commit" && test -z "$(git status --porcelain)"`},
	{name: "git commit", setup: gitProject,
		cmd:   `echo "- fix the login bug" >> CHANGELOG.md && git add -A && git commit -m "Fix the login bug" && git log --oneline -3`,
		want:  []string{"Fix the login bug", "Add settings"},
		check: `test "$(git log -1 --format=%s)" = "Fix the login bug" && test -z "$(git status --porcelain)"`},
	{name: "git branch and merge", setup: gitProject,
		cmd: `git checkout -b feature/search && echo "def search(q): return []" > src/app/search.py && git add -A && git commit -m "Add search" && ` +
			`git checkout main && echo "- search" >> CHANGELOG.md && git commit -am "Note search" && git merge --no-ff -m "Merge feature/search" feature/search && git branch --merged`,
		want:  []string{"feature/search"},
		check: `git log --merges --format=%s | grep -qx "Merge feature/search" && test -f src/app/search.py`},
	{name: "git stash", setup: gitProject,
		cmd:   `echo "DEBUG = False" >> src/app/__init__.py && git stash push -m "wip: debug off" && git stash list && git status --short && git stash pop && git diff --stat`,
		want:  []string{"wip: debug off", "src/app/__init__.py"},
		check: `grep -q "DEBUG = False" src/app/__init__.py && test -z "$(git stash list)"`},
	{name: "git rebase", setup: gitProject + `git checkout -qb feature
echo "- feature" >> CHANGELOG.md
git commit -qam "Add feature"
git checkout -q main
echo "more" >> README.md
git commit -qam "Update readme"
`,
		cmd:   `git checkout feature && git rebase main && git log --oneline --graph`,
		want:  []string{"Add feature", "Update readme"},
		check: `git merge-base --is-ancestor main feature && test "$(git log -1 --format=%s feature)" = "Add feature"`},
	{name: "git log, diff and show", setup: gitProject + `sed -i 's/DEBUG = True/DEBUG = False/' src/app/__init__.py
git commit -qam "Turn debug off"
echo "# scratch" >> notes.txt
`,
		cmd:  `git log --oneline -5 && git diff HEAD~1 --stat && git show --stat HEAD && git diff && git diff HEAD~2 -- src/app/__init__.py`,
		want: []string{"Turn debug off", "src/app/__init__.py", "+# scratch", "-DEBUG = True"}},
	{name: "git tag", setup: gitProject,
		cmd:   `git tag -a v1.0.0 -m "Release 1.0.0" && git tag -l && git describe --tags`,
		want:  []string{"v1.0.0\n"},
		check: `git rev-parse -q --verify refs/tags/v1.0.0`},
	{name: "git grep and blame", setup: gitProject,
		cmd:  `git grep -n TODO && git blame -L 1,4 src/app/__init__.py`,
		want: []string{"src/app/store.py:5:", "Ada Agent"}},
	{name: "git restore and reset", setup: gitProject,
		cmd:   `echo "oops" > README.md && git restore README.md && git reset --soft HEAD~1 && git status --short`,
		want:  []string{"A  src/app/settings.py"},
		check: `test "$(git log -1 --format=%s)" = "Initial commit" && grep -q "A small service" README.md`},
	{name: "git format-patch and am", setup: gitProject,
		cmd:   `git format-patch -1 HEAD -o patches && git checkout -b replay HEAD~1 && git am patches/*.patch && git log --oneline -1`,
		want:  []string{"patches/0001-Add-settings.patch", "Add settings"},
		check: `test "$(git log -1 --format=%s replay)" = "Add settings"`},
	{name: "git clone of a local repository outside the workspace", setup: libRepo,
		cmd:   `git clone ~/src/libfoo vendor/libfoo && git -C vendor/libfoo log --oneline`,
		want:  []string{"Initial libfoo"},
		check: `test -f vendor/libfoo/foo.c && git -C vendor/libfoo status --short`},
	{name: "git worktree inside the workspace and a commit there", setup: gitProject,
		cmd:   `git worktree add -b hotfix .worktrees/hotfix && cd .worktrees/hotfix && echo "PORT = 9090" >> src/app/settings.py && git commit -am "Hotfix the port" && git worktree list`,
		want:  []string{"[hotfix]"},
		check: `test "$(git log -1 --format=%s hotfix)" = "Hotfix the port"`},
	{name: "a commit in a git worktree of a repository outside the project", setup: `git init -q ../repo
printf 'print("hello")\n' > ../repo/app.py
git -C ../repo add -A
git -C ../repo commit -qm "Initial commit"
git -C ../repo worktree add -q -b agent/task "$PWD"
`,
		cmd:   `echo 'print("bye")' >> app.py && git add -A && git commit -m "Say bye" && git log --oneline && git status --short --branch`,
		want:  []string{"Say bye", "## agent/task"},
		check: `test "$(git -C ../repo log -1 --format=%s agent/task)" = "Say bye"`},
	{name: "git remote add, fetch and a branch from the remote", setup: gitProject + libRepo,
		cmd: `git remote add lib ~/src/libfoo && git fetch -q lib && git checkout -b libwork lib/main && ` +
			`git branch -m libwork lib-work && git branch -vv && git remote -v`,
		want:  []string{"lib-work", "[lib/main]", "lib\t"},
		check: `test "$(git config remote.lib.url)" = "$HOME/src/libfoo" && test "$(git config branch.lib-work.merge)" = refs/heads/main && test -f foo.c`},
	{name: "git submodule add and update of a local repository", setup: gitProject + libRepo,
		cmd: `git -c protocol.file.allow=always submodule add ~/src/libfoo lib/foo && git commit -m "Add libfoo" && ` +
			`git -c protocol.file.allow=always submodule update --init --recursive && git submodule status`,
		want:  []string{" lib/foo "},
		check: `test -f lib/foo/foo.c && test -z "$(git status --porcelain)"`},
	{name: "git submodule update after a clone", setup: libRepo + `git init -q "$CASE_HOME/src/app"
git -C "$CASE_HOME/src/app" -c protocol.file.allow=always submodule add -q ../libfoo lib/foo
git -C "$CASE_HOME/src/app" commit -qm "Add libfoo"
git clone -q "$CASE_HOME/src/app" .
`,
		cmd:   `git -c protocol.file.allow=always submodule update --init && git submodule status && cat lib/foo/foo.c`,
		want:  []string{"return 42"},
		check: `test -f lib/foo/foo.c && test -z "$(git status --porcelain)"`},

	// Builds.
	{name: "make",
		setup: `printf 'b,2\na,1\nc,3\n' > data.csv
cat > Makefile <<'EOF'
out/sorted.csv: data.csv
	mkdir -p out
	sort $< > $@

.PHONY: check clean
check: out/sorted.csv
	head -1 out/sorted.csv | grep -q '^a,1$$' && echo "check ok"

clean:
	rm -rf out
EOF
`,
		cmd:   `make && make check && make clean && make -j2 check`,
		want:  []string{"check ok"},
		check: `test -f out/sorted.csv`},
	{name: "a C build with gcc and a Makefile",
		setup: `mkdir -p src include
printf 'int mul(int a, int b);\n' > include/calc.h
printf '#include "calc.h"\nint mul(int a, int b) { return a * b; }\n' > src/calc.c
printf '#include <stdio.h>\n#include <stdlib.h>\n#include "calc.h"\nint main(int argc, char **argv) {\n  if (argc != 3) return 2;\n  printf("%%d\\n", mul(atoi(argv[1]), atoi(argv[2])));\n  return 0;\n}\n' > src/main.c
cat > Makefile <<'EOF'
CC ?= gcc
CFLAGS = -Wall -Werror -O2 -Iinclude
OBJ = build/main.o build/calc.o

bin/calc: $(OBJ)
	mkdir -p bin
	$(CC) -o $@ $(OBJ)

build/%.o: src/%.c include/calc.h
	mkdir -p build
	$(CC) $(CFLAGS) -c -o $@ $<

.PHONY: clean
clean:
	rm -rf build bin
EOF
`,
		cmd:   `make CC=gcc && ./bin/calc 6 7`,
		want:  []string{"42\n"},
		check: `test -x bin/calc && test -f build/calc.o`},
	{name: "a static library with gcc and ar",
		setup: `printf 'double half(double x) { return x / 2; }\n' > half.c
printf '#include <stdio.h>\n#include <math.h>\ndouble half(double);\nint main(void) { printf("%%.1f\\n", sqrt(half(32))); return 0; }\n' > main.c
`,
		cmd:  `gcc -c -O2 -fPIC half.c && ar rcs libhalf.a half.o && gcc -Wall -o main main.c -L. -lhalf -lm && ./main`,
		want: []string{"4.0\n"}},

	// Python.
	{name: "a python venv with a local package and a script using it", slow: true,
		setup: `mkdir -p mylib/mylib
printf 'def slug(s):\n    return "-".join(s.lower().split())\n' > mylib/mylib/__init__.py
printf 'from setuptools import setup\nsetup(name="mylib", version="0.1", packages=["mylib"])\n' > mylib/setup.py
printf 'from mylib import slug\nprint(slug("Hello Agent World"))\n' > app.py
`,
		cmd:   `python3 -m venv .venv && .venv/bin/pip install --no-index --find-links /usr/share/python-wheels ./mylib && .venv/bin/python app.py && . .venv/bin/activate && python -c "import sys; print(sys.prefix)"`,
		want:  []string{"hello-agent-world", "{project}/.venv"},
		check: `.venv/bin/python -c "import mylib"`},
	{name: "python unittest", setup: pyProject,
		cmd:  `python3 -m unittest discover -s tests -v 2>&1`,
		want: []string{"test_greet", "\nOK\n"}},
	{name: "python tests in a multiprocessing pool",
		setup: `cat > check_primes.py <<'EOF'
from multiprocessing import Pool


def is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


if __name__ == "__main__":
    with Pool(4) as pool:
        print("primes:", [n for n, p in zip(range(30), pool.map(is_prime, range(30))) if p])
EOF
`,
		cmd:  `python3 check_primes.py`,
		want: []string{"primes: [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]"}},
	{name: "a sqlite database in the project",
		cmd:   `python3 -c "import sqlite3; db = sqlite3.connect('app.db'); db.execute('create table users (name text)'); db.executemany('insert into users values (?)', [('ada',), ('bob',)]); db.commit(); print('users:', db.execute('select count(*) from users').fetchone()[0])"`,
		want:  []string{"users: 2"},
		check: `test -s app.db`},
	{name: "python3 -c with file IO",
		setup: `printf '{"name": "app", "debug": false}\n' > config.json`,
		cmd:   `python3 -c "import json, pathlib; p = pathlib.Path('config.json'); c = json.loads(p.read_text()); c['debug'] = True; p.write_text(json.dumps(c, indent=2)); print(p.read_text())"`,
		want:  []string{`"debug": true`},
		check: `grep -q '"debug": true' config.json`},
	{name: "a dev server and a client in one command", setup: `printf '<h1>dev</h1>\n' > index.html`,
		cmd: `python3 -u -m http.server 0 --bind 127.0.0.1 > server.log 2>&1 & server=$!
for i in $(seq 100); do grep -q "port" server.log && break; sleep 0.1; done
port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' server.log)
curl -fsS "http://127.0.0.1:$port/index.html"
kill $server`,
		want: []string{"<h1>dev</h1>"}},

	// The network.
	{name: "HTTPS to an allowed domain",
		cmd:  `curl -fsS "$(npm config get registry)is-number/7.0.0" | python3 -c "import json, sys; print(json.load(sys.stdin)['version'])"`,
		want: []string{"7.0.0\n"}},

	// Files and the shell.
	{name: "tar and gzip in TMPDIR", setup: pyProject,
		cmd:   `tar czf "$TMPDIR/release.tar.gz" src && mkdir -p unpacked && tar xzf "$TMPDIR/release.tar.gz" -C unpacked && diff -r src unpacked/src && gzip -k notes.txt && zcat notes.txt.gz | head -1 && rm "$TMPDIR/release.tar.gz"`,
		want:  []string{"first note"},
		check: `test -f notes.txt.gz && test -f unpacked/src/app/store.py`},
	{name: "mktemp and mktemp -d in TMPDIR",
		cmd:  `f=$(mktemp) && d=$(mktemp -d) && case "$f:$d" in "$TMPDIR"/*:"$TMPDIR"/*) ;; *) exit 1;; esac && echo data > "$f" && cp "$f" "$d/copy" && cat "$d/copy" && rm -rf "$f" "$d"`,
		want: []string{"data"}},
	{name: "writing to /tmp",
		cmd:  `echo "scratch $$" > /tmp/agent-scratch-$$.txt && cat /tmp/agent-scratch-$$.txt && rm /tmp/agent-scratch-$$.txt && echo removed`,
		want: []string{"scratch ", "removed"}},
	{name: "ripgrep", setup: pyProject,
		cmd:  `rg -n TODO && rg --files -g '*.py' | sort && rg -c "def " src`,
		want: []string{"src/app/store.py:5:", "tests/test_app.py"}},
	{name: "sed -i", setup: pyProject,
		cmd:   `sed -i 's/^port = 8080$/port = 9090/' config.ini && grep -n port config.ini`,
		want:  []string{"3:port = 9090"},
		check: `grep -qx "port = 9090" config.ini`},
	{name: "find and xargs", setup: pyProject,
		cmd:  `find . -name '*.py' -not -path './.git/*' -print0 | xargs -0 grep -l "import" | sort`,
		want: []string{"./src/app/__init__.py\n./src/app/store.py\n./tests/test_app.py\n"}},
	{name: "a background job that ends with the command",
		cmd:  `sleep 1 & wait && echo "background job done"`,
		want: []string{"background job done"}},
	{name: "a script without #!",
		setup: `printf 'set -e\nmkdir -p out\necho built > out/result.txt\necho "build finished"\n' > build.sh && chmod 755 build.sh`,
		cmd:   `./build.sh && cat out/result.txt`,
		want:  []string{"build finished", "built"},
		check: `test -f out/result.txt`},
	{name: "chmod +x and run a script",
		cmd:   `printf '#!/bin/sh\necho "deploy dry-run: $1"\n' > deploy.sh && chmod +x deploy.sh && ./deploy.sh staging`,
		want:  []string{"deploy dry-run: staging"},
		check: `test -x deploy.sh`},
	{name: "a symlink in the workspace",
		setup: `mkdir -p config && printf '{"env": "dev"}\n' > config/app.dev.json`,
		cmd:   `ln -sf config/app.dev.json app.json && cat app.json && readlink app.json`,
		want:  []string{`{"env": "dev"}`, "config/app.dev.json"},
		check: `test "$(readlink app.json)" = config/app.dev.json`},
	{name: "ln -s, mv and rm -rf of a tree",
		cmd:   `mkdir -p build/assets/img && touch build/assets/img/logo.png build/index.html && mv build dist && ln -s dist current && ls current/assets/img && rm -rf dist current && test ! -e dist && echo cleaned`,
		want:  []string{"logo.png", "cleaned"},
		check: `test ! -e dist && test ! -e current`},
	{name: "a pipeline with tee", setup: pyProject,
		cmd:   `ls -1 src/app | tee files.txt | wc -l && cat files.txt`,
		want:  []string{"2\n", "store.py"},
		check: `grep -q store.py files.txt`},
	{name: "env and printenv",
		cmd:  `printenv HOME && pwd && env | grep -E '^(HOME|PWD)=' | sort`,
		want: []string{"{home}\n{project}\n", "HOME={home}\nPWD={project}\n"}},
	{name: "diff and patch", setup: pyProject,
		cmd: `cp src/app/__init__.py app.orig && sed -i 's/DEBUG = True/DEBUG = False/' src/app/__init__.py && ` +
			`diff -u app.orig src/app/__init__.py > debug.patch; patch -R src/app/__init__.py < debug.patch && grep DEBUG src/app/__init__.py && patch src/app/__init__.py < debug.patch && grep DEBUG src/app/__init__.py`,
		want:  []string{"DEBUG = True\n", "DEBUG = False\n"},
		check: `grep -q "DEBUG = False" src/app/__init__.py`},
	{name: "cp -a", setup: pyProject,
		cmd:   `cp -a scripts scripts.bak && diff -r scripts scripts.bak && stat -c '%a %n' scripts.bak/check.sh`,
		want:  []string{"755 scripts.bak/check.sh"},
		check: `test -x scripts.bak/check.sh`},
	{name: "du", setup: pyProject,
		cmd:  `du -sh src && du -ak src | sort -n | tail -3`,
		want: []string{"\tsrc\n"}},
	{name: "a long output",
		cmd:  `seq 1 200000 | sed 's/^/line /'`,
		want: []string{"line 1\n", "\nline 199999\nline 200000\n"}},
	{name: "a command reading stdin", stdin: "banana\napple\ncherry\napple\n",
		cmd:   `tee fruit.txt | sort | uniq -c | sort -rn | head -1`,
		want:  []string{"2 apple"},
		check: `test "$(wc -l < fruit.txt)" = 4`},
	{name: "a heredoc into a file",
		cmd: `cat > PLAN.md <<'EOF'
# Plan
- write the parser
- test it
EOF
wc -l PLAN.md`,
		want:  []string{"3 PLAN.md"},
		check: `grep -q "write the parser" PLAN.md`},
	{name: "ps of its own processes",
		// (until the child has become sleep: on a loaded machine ps
		// saw it still a bash between fork and exec)
		cmd:  `sleep 30 & pid=$!; for i in $(seq 100); do [ "$(ps -o comm= -p $pid)" = sleep ] && break; sleep 0.05; done; ps -o pid=,comm= -p $pid && ps -o comm= --ppid $$ && kill $pid`,
		want: []string{" sleep\n"}},
	{name: "kill of its own background job",
		cmd:  `sleep 60 & pid=$!; kill $pid; wait $pid; echo "exit status $?"`,
		want: []string{"exit status 143"}},
	{name: "timeout of a slow command",
		cmd:  `timeout 1 sleep 10; echo "exit status $?"`,
		want: []string{"exit status 124"}},
	{name: "ulimit -n",
		cmd:  `ulimit -n && ulimit -Sn 256 && ulimit -n`,
		want: []string{"\n256\n"}},
	{name: "date, id and whoami",
		cmd:  `date -u +%Y-%m-%dT%H:%M:%SZ && id -un && whoami && hostname >/dev/null && echo ok`,
		want: []string{"\n{user}\n{user}\nok\n"}},
}

// ordinaryTimeout bounds one run of a case (and of its setup); slow cases
// get ordinarySlowTimeout. On a busy machine an empty Go build cache alone
// takes minutes.
const (
	ordinaryTimeout     = 2 * time.Minute
	ordinarySlowTimeout = 10 * time.Minute
)

// TestOrdinaryWork runs ordinaryCases as root and as an unprivileged user,
// and prints how many succeeded under cordon.
func TestOrdinaryWork(t *testing.T) {
	requires(t, needTool("bash"), needTool("git"), needTool("make"), needTool("gcc"), needTool("ar"),
		needTool("python3"), needTool("node"), needTool("npm"), needTool("curl"), needTool("rg"),
		needTool("patch"), needTool("ps"), needPythonVenv, needGo)
	reg := ordinaryRegistries()
	if reg.err != nil {
		t.Fatalf("the package registries of this machine: %v", reg.err)
	}
	t.Logf("registries: %s", strings.Join(reg.hosts, " "))
	eachCaller(t, func(t *testing.T, c *caller) {
		var tally ordinaryTally
		t.Cleanup(func() { tally.report(t, c) })
		for i, oc := range ordinaryCases {
			t.Run(oc.name, func(t *testing.T) {
				t.Parallel()
				tally.ran()
				// Every second case works in a project under /tmp (which
				// the sandbox replaces with its own: the project is bound
				// on top), the others under /var/tmp.
				opts := []boxOpt{userHome}
				if i%2 == 1 {
					opts = append(opts, underTmp)
				}
				if runOrdinary(t, c, oc, reg, opts, false) && runOrdinary(t, c, oc, reg, opts, true) {
					tally.succeeded()
				}
			})
		}
	})
}

// ordinaryTally counts the cases of one caller.
type ordinaryTally struct {
	mu   sync.Mutex
	n, m int
}

func (ta *ordinaryTally) ran() {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	ta.m++
}

func (ta *ordinaryTally) succeeded() {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	ta.n++
}

func (ta *ordinaryTally) report(t *testing.T, c *caller) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	// Printed, not logged: the figure is the suite's result.
	fmt.Printf("ordinary work as %s (%s): %d/%d succeeded under cordon\n", c.name, c.username, ta.n, ta.m)
	if ta.n != ta.m {
		t.Errorf("%d of %d cases did not succeed (see their subtests)", ta.m-ta.n, ta.m)
	}
}

// runOrdinary runs one case in a fresh project with a fresh home,
// unsandboxed or under cordon, and reports whether it succeeded. An
// unsandboxed failure is the case's own: it fails the test as broken.
func runOrdinary(t *testing.T, c *caller, oc ordinaryCase, reg registries, opts []boxOpt, sandboxed bool) bool {
	t.Helper()
	how := "unsandboxed"
	if sandboxed {
		how = "under cordon"
	}
	fail := func(format string, args ...any) bool {
		t.Helper()
		if !sandboxed {
			t.Errorf("broken case: it fails unsandboxed: "+format, args...)
		} else {
			t.Errorf(how+": "+format, args...)
		}
		return false
	}

	b := newBox(t, c, opts...)
	t.Logf("%s: the project is %s", how, b.ws)
	tmp := filepath.Join(b.dir, "tmp")
	must(t, os.Mkdir(tmp, 0o700))
	setupHome := filepath.Join(b.dir, "setup-home")
	makeUserHome(t, setupHome)
	b.chown()
	timeout := ordinaryTimeout
	if oc.slow {
		timeout = ordinarySlowTimeout
	}
	env := append([]string{"PATH=" + ordinaryPath(), "TMPDIR=" + tmp, "SHELL=/bin/bash"}, reg.env...)

	if oc.setup != "" {
		s := runSpec{args: []string{"bash", "-c", "set -e\n" + oc.setup}, env: append(slices.Clone(env), "HOME="+setupHome, "CASE_HOME="+b.home), timeout: timeout}
		if r := b.direct(s); r.code != 0 {
			return fail("its setup: %s", r)
		}
	}

	s := runSpec{args: []string{"bash", "-c", oc.cmd}, env: env, timeout: timeout}
	if oc.stdin != "" {
		s.stdin = strings.NewReader(oc.stdin)
	}
	var r result
	if sandboxed {
		for _, h := range reg.hosts {
			s.flags = append(s.flags, "--allow-domain", h)
		}
		r = b.runSpec(s)
	} else {
		r = b.direct(s)
	}
	if r.code != 0 {
		if sandboxed {
			// What the sandbox refused in these minutes (other cases'
			// too): the guard records the paths as it saw them.
			v := b.cordon(runSpec{}, "violations", "--since", "5m")
			t.Logf("cordon violations --since 5m:\n%s", v.stdout)
		}
		return fail("%s", r)
	}
	expand := strings.NewReplacer("{home}", b.home, "{project}", b.ws, "{user}", c.username).Replace
	for _, w := range oc.want {
		if !strings.Contains(r.stdout, expand(w)) {
			return fail("stdout lacks %q\n%s", expand(w), r)
		}
	}
	if oc.check != "" {
		cs := runSpec{args: []string{"bash", "-c", "set -e\n" + oc.check}, env: env, timeout: timeout}
		if cr := b.direct(cs); cr.code != 0 {
			return fail("after the command, on the host, %q: %s\n(the command: %s)", oc.check, cr, r)
		}
	}
	t.Logf("%s: succeeded", how)
	return true
}

// direct runs s.args as the box's caller, in the workspace, with the box's
// environment and s.env, outside any sandbox; the process group is killed
// after s.timeout.
func (b *box) direct(s runSpec) result {
	b.t.Helper()
	timeout := s.timeout
	if timeout == 0 {
		timeout = runTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.args[0], s.args[1:]...)
	cmd.Dir = s.dir
	if cmd.Dir == "" {
		cmd.Dir = b.ws
	}
	cmd.Env = b.env(s.env...)
	cmd.Stdin = s.stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.c.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := runLocked(cmd)
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		r.stderr += fmt.Sprintf("\n(killed after %v)", timeout)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		exitCode(&r, ee)
	default:
		b.t.Fatalf("%s: %v", quote(s.args), err)
	}
	b.t.Logf("unsandboxed %s → exit %d%s", quote(s.args), r.code, logTail(r.stderr))
	return r
}

// ordinaryPath is the cases' PATH: the sandbox's, and the directories of
// go and node where they are elsewhere (Go's tarball in /usr/local/go).
var ordinaryPath = sync.OnceValue(func() string {
	dirs := filepath.SplitList(sandboxPath)
	for _, tool := range []string{goTool(), "node", "npm"} {
		if p, err := exec.LookPath(tool); err == nil && !slices.Contains(dirs, filepath.Dir(p)) {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	return strings.Join(dirs, string(filepath.ListSeparator))
})

// goTool is the go command: on PATH, or the one that built this test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// needGo: the go command.
func needGo() string {
	if _, err := os.Stat(goTool()); err != nil {
		return "the go command (" + err.Error() + ")"
	}
	return ""
}

// needPythonVenv: python3 makes virtual environments (Debian's
// python3-venv) and pip finds setuptools and wheel offline where Debian
// keeps them (python3-setuptools-whl, python3-wheel-whl).
func needPythonVenv() string {
	if err := exec.Command("/usr/bin/python3", "-c", "import ensurepip, venv").Run(); err != nil {
		return "python3's venv and ensurepip (Debian's python3-venv)"
	}
	for _, w := range []string{"setuptools", "wheel"} {
		if m, _ := filepath.Glob("/usr/share/python-wheels/" + w + "-*.whl"); len(m) == 0 {
			return "/usr/share/python-wheels/" + w + "-*.whl (Debian's python3-" + w + "-whl)"
		}
	}
	return ""
}

// registries are the package registries this machine's npm and go use,
// read from their own configuration when the suite runs.
type registries struct {
	hosts []string // for --allow-domain
	// env carries the same configuration into the cases, whose homes
	// are fresh: npm_config_registry, GOPROXY, GOSUMDB, ...
	env []string
	err error
}

var ordinaryRegistries = sync.OnceValue(func() registries {
	var reg registries
	reg.err = reg.read()
	return reg
})

func (reg *registries) read() error {
	out, err := exec.Command("npm", "config", "get", "registry").Output()
	if err != nil {
		return fmt.Errorf("npm config get registry: %w", err)
	}
	npmRegistry := strings.TrimSpace(string(out))
	if err := reg.addURL(npmRegistry); err != nil {
		return fmt.Errorf("npm config get registry: %w", err)
	}
	reg.env = append(reg.env, "npm_config_registry="+npmRegistry)

	out, err = exec.Command(goTool(), "env", "-json", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GONOPROXY", "GOPRIVATE", "GOINSECURE").Output()
	if err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	var goEnv map[string]string
	if err := json.Unmarshal(out, &goEnv); err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(goEnv)) {
		if v := goEnv[name]; v != "" {
			reg.env = append(reg.env, name+"="+v)
		}
	}
	proxies := 0
	for _, p := range strings.FieldsFunc(goEnv["GOPROXY"], func(r rune) bool { return r == ',' || r == '|' }) {
		if p == "direct" || p == "off" {
			continue
		}
		if !strings.Contains(p, "://") {
			p = "https://" + p // as go reads a proxy without a scheme
		}
		if err := reg.addURL(p); err != nil {
			return fmt.Errorf("GOPROXY: %w", err)
		}
		proxies++
	}
	if proxies == 0 {
		return fmt.Errorf("GOPROXY %q names no proxy: the go case needs one", goEnv["GOPROXY"])
	}
	// GOSUMDB is "off", "NAME[+KEY]" (served at https://NAME) or
	// "NAME[+KEY] URL".
	if f := strings.Fields(goEnv["GOSUMDB"]); len(f) > 0 && f[0] != "off" {
		u := "https://" + strings.SplitN(f[0], "+", 2)[0]
		if len(f) > 1 {
			u = f[1]
			if !strings.Contains(u, "://") {
				u = "https://" + u
			}
		}
		if err := reg.addURL(u); err != nil {
			return fmt.Errorf("GOSUMDB: %w", err)
		}
	}
	return nil
}

// addURL adds the host (and port, when named) of a registry's URL.
func (reg *registries) addURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", raw)
	}
	if !slices.Contains(reg.hosts, u.Host) {
		reg.hosts = append(reg.hosts, u.Host)
	}
	return nil
}
