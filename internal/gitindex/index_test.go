package gitindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// entry is one index entry for build.
type entry struct {
	path     string
	extended bool // version 3 and 4: extended flags follow
	// strip, in version 4, overrides how many bytes of the previous path
	// are dropped (-1: as git would)
	strip int
}

// build writes an index as git does: the header, the entries, the
// extensions given (signature + body) and a checksum of zeros.
func build(version, hashSize int, entries []entry, exts ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString("DIRC")
	binary.Write(&b, binary.BigEndian, uint32(version))
	binary.Write(&b, binary.BigEndian, uint32(len(entries)))
	prev := ""
	for _, e := range entries {
		start := b.Len()
		b.Write(make([]byte, statSize))
		b.Write(bytes.Repeat([]byte{0xab}, hashSize))
		flags := uint16(min(len(e.path), 0xfff))
		if e.extended {
			flags |= flagExtend
		}
		binary.Write(&b, binary.BigEndian, flags)
		if e.extended {
			b.Write([]byte{0x20, 0}) // intent-to-add
		}
		if version == 4 {
			common := 0
			for common < len(prev) && common < len(e.path) && prev[common] == e.path[common] {
				common++
			}
			strip := len(prev) - common
			if e.strip >= 0 {
				strip = e.strip
			}
			b.Write(putVarint(uint64(strip)))
			b.WriteString(e.path[min(common, len(e.path)):])
			b.WriteByte(0)
		} else {
			b.WriteString(e.path)
			size := (b.Len() - start + 8) &^ 7
			b.Write(make([]byte, size-(b.Len()-start)))
		}
		prev = e.path
	}
	for _, x := range exts {
		b.Write(x)
	}
	b.Write(make([]byte, hashSize))
	return b.Bytes()
}

// ext is an extension's bytes.
func ext(sig string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString(sig)
	binary.Write(&b, binary.BigEndian, uint32(len(body)))
	b.Write(body)
	return b.Bytes()
}

// putVarint is git's encode_varint.
func putVarint(v uint64) []byte {
	var buf [16]byte
	pos := len(buf) - 1
	buf[pos] = byte(v & 0x7f)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		buf[pos] = 0x80 | byte(v&0x7f)
	}
	return buf[pos:]
}

func es(paths ...string) []entry {
	var out []entry
	for _, p := range paths {
		out = append(out, entry{path: p, strip: -1})
	}
	return out
}

func TestParse(t *testing.T) {
	long := strings.Repeat("d/", 2100) + ".env" // longer than the flags' 12 bits
	shared := bytes.Repeat([]byte{0x5e}, SHA1)
	for _, tc := range []struct {
		name    string
		data    []byte
		hash    int
		want    Index
		wantErr bool
	}{
		{name: "v2", data: build(2, SHA1, es(".env", "a/b.go", "a/c/.env", "z")), hash: SHA1,
			want: Index{Version: 2, Paths: []string{".env", "a/b.go", "a/c/.env", "z"}}},
		{name: "v2 names of every padding", data: build(2, SHA1, es("a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh")), hash: SHA1,
			want: Index{Version: 2, Paths: []string{"a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh"}}},
		{name: "v2 empty", data: build(2, SHA1, nil), hash: SHA1, want: Index{Version: 2, Paths: []string{}}},
		{name: "v3 extended", data: build(3, SHA1, []entry{{path: ".env", extended: true}, {path: "b"}}), hash: SHA1,
			want: Index{Version: 3, Paths: []string{".env", "b"}}},
		{name: "v4 prefixes", data: build(4, SHA1, es("app/config/.env", "app/config/.env.local", "app/main.go", "b", "b/c/d")), hash: SHA1,
			want: Index{Version: 4, Paths: []string{"app/config/.env", "app/config/.env.local", "app/main.go", "b", "b/c/d"}}},
		{name: "v4 extended", data: build(4, SHA1, []entry{{path: "x/.env", extended: true, strip: -1}, {path: "x/y", strip: -1}}), hash: SHA1,
			want: Index{Version: 4, Paths: []string{"x/.env", "x/y"}}},
		{name: "v4 long path", data: build(4, SHA1, es("a", long)), hash: SHA1, want: Index{Version: 4, Paths: []string{"a", long}}},
		{name: "v2 long path", data: build(2, SHA1, es(long)), hash: SHA1, want: Index{Version: 2, Paths: []string{long}}},
		{name: "sha256", data: build(2, SHA256, es(".env", "k.pem")), hash: SHA256, want: Index{Version: 2, Paths: []string{".env", "k.pem"}}},
		{name: "conflict stages once", data: build(2, SHA1, es("a", "c", "c", "c", "d")), hash: SHA1, want: Index{Version: 2, Paths: []string{"a", "c", "d"}}},
		{name: "sparse directory", data: build(4, SHA1, es("a", "vendor/")), hash: SHA1, want: Index{Version: 4, Paths: []string{"a", "vendor/"}}},
		{name: "extensions skipped", data: build(2, SHA1, es("a"), ext("TREE", []byte("junk\x00-1 0\n")), ext("REUC", nil)), hash: SHA1,
			want: Index{Version: 2, Paths: []string{"a"}}},
		{name: "split index", data: build(2, SHA1, es("", "new"), ext("link", append(shared, 0, 0, 0, 0))), hash: SHA1,
			want: Index{Version: 2, Paths: []string{"new"}, Shared: strings.Repeat("5e", SHA1)}},
		{name: "not an index", data: []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x00"), hash: SHA1, wantErr: true},
		{name: "short", data: []byte("DIRC"), hash: SHA1, wantErr: true},
		{name: "version 1", data: build(1, SHA1, nil), hash: SHA1, wantErr: true},
		{name: "version 5", data: build(5, SHA1, nil), hash: SHA1, wantErr: true},
		{name: "cut entry", data: build(2, SHA1, es("abc"))[:12+50], hash: SHA1, wantErr: true},
		{name: "cut path", data: build(2, SHA1, es("abcdefgh"))[:12+62+4], hash: SHA1, wantErr: true},
		{name: "count beyond the data", data: func() []byte {
			b := build(2, SHA1, es("a"))
			binary.BigEndian.PutUint32(b[8:], 1<<31)
			return b
		}(), hash: SHA1, wantErr: true},
		{name: "extended flags in v2", data: build(2, SHA1, []entry{{path: "a", extended: true}}), hash: SHA1, wantErr: true},
		{name: "v4 strips more than the previous path", data: build(4, SHA1, []entry{{path: "a", strip: -1}, {path: "b", strip: 5}}), hash: SHA1, wantErr: true},
		{name: "extension cut short", data: build(2, SHA1, es("a"), []byte("TREE\x00\x00\x10\x00")), hash: SHA1, wantErr: true},
		{name: "sha1 index read as sha256", data: build(2, SHA1, es("abcdefghijklmnop")), hash: SHA256, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.data, tc.hash)
			if tc.wantErr {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("Parse: %v (%+v), want an ErrFormat", err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 255, 16383, 16384, 1 << 20, 1<<32 + 7} {
		got, n := varint(append(putVarint(v), 'x'))
		if got != v || n != len(putVarint(v)) {
			t.Errorf("varint(putVarint(%d)) = %d, %d bytes; want %d, %d bytes", v, got, n, v, len(putVarint(v)))
		}
	}
	if _, n := varint([]byte{0x80}); n != 0 {
		t.Errorf("varint of a cut value took %d bytes, want 0", n)
	}
	if _, n := varint(bytes.Repeat([]byte{0xff}, 12)); n != 0 {
		t.Errorf("varint of an overflowing value took %d bytes, want 0", n)
	}
}

// TestParseGit reads the indexes git itself writes, in every version, and
// a split index with its shared one.
func TestParseGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	gitCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gitCmd("init", "-q")
	files := []string{".env", "a/b/c/.env", "a/b/c/main.go", "a/b/d.go", "config/secrets/key.pem", "z z/é.txt", strings.Repeat("long/", 30) + "x"}
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitCmd("add", ".")
	for _, v := range []string{"2", "3", "4"} {
		t.Run("v"+v, func(t *testing.T) {
			if v == "3" {
				// intent-to-add: extended flags, which need version 3
				if err := os.WriteFile(filepath.Join(dir, "later"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				gitCmd("add", "-N", "later")
			}
			gitCmd("update-index", "--index-version", v)
			want := strings.Split(strings.TrimSuffix(gitCmd("ls-files", "-z"), "\x00"), "\x00")
			ix := parseFile(t, filepath.Join(dir, ".git", "index"))
			if got := strconv.Itoa(ix.Version); got != v {
				t.Errorf("version %s, want %s", got, v)
			}
			if diff := cmp.Diff(want, ix.Paths); diff != "" {
				t.Errorf("paths (-git ls-files +Parse):\n%s", diff)
			}
		})
	}
	t.Run("split", func(t *testing.T) {
		gitCmd("update-index", "--index-version", "2")
		gitCmd("update-index", "--split-index")
		if err := os.WriteFile(filepath.Join(dir, "added"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		gitCmd("add", "added")
		ix := parseFile(t, filepath.Join(dir, ".git", "index"))
		if ix.Shared == "" {
			t.Fatalf("no shared index named in %+v", ix)
		}
		shared := parseFile(t, filepath.Join(dir, ".git", "sharedindex."+ix.Shared))
		all := map[string]bool{}
		for _, p := range append(ix.Paths, shared.Paths...) {
			all[p] = true
		}
		want := strings.Split(strings.TrimSuffix(gitCmd("ls-files", "-z"), "\x00"), "\x00")
		for _, p := range want {
			if !all[p] {
				t.Errorf("%s: in neither the split index nor its shared one", p)
			}
		}
	})
}

// parseFile parses the SHA-1 index file at name.
func parseFile(t *testing.T, name string) Index {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Parse(data, SHA1)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// FuzzParse: Parse never panics, never allocates beyond what the data can
// hold, and what it reads back from an index it wrote is what it wrote.
func FuzzParse(f *testing.F) {
	for _, v := range []int{2, 3, 4} {
		f.Add(build(v, SHA1, es(".env", "a/b/.env", "a/c", "b")), false)
		f.Add(build(v, SHA256, es("x/y/z.pem", "x/y/zz")), true)
	}
	f.Add(build(3, SHA1, []entry{{path: "a", extended: true}}), false)
	f.Add(build(2, SHA1, es("", "n"), ext("link", bytes.Repeat([]byte{1}, 24))), false)
	f.Add([]byte("DIRC\x00\x00\x00\x04\xff\xff\xff\xff"), false)
	f.Fuzz(func(t *testing.T, data []byte, sha256 bool) {
		hash := SHA1
		if sha256 {
			hash = SHA256
		}
		ix, err := Parse(data, hash)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v is not an ErrFormat", err)
			}
			return
		}
		if len(ix.Paths) > len(data)/(statSize+hash+flagsSize)+1 {
			t.Fatalf("%d paths from %d bytes", len(ix.Paths), len(data))
		}
		// Written again (without extensions), the same paths come back.
		again, err := Parse(build(ix.Version, hash, es(ix.Paths...)), hash)
		if err != nil {
			t.Fatalf("re-reading %q: %v", ix.Paths, err)
		}
		if diff := cmp.Diff(ix.Paths, again.Paths, cmpEmpty); diff != "" {
			t.Fatalf("re-read (-want +got):\n%s", diff)
		}
	})
}

// cmpEmpty makes nil and empty lists equal.
var cmpEmpty = cmp.Comparer(func(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
})
