// Package gitconfig reads what the sandbox layers need of a repository's
// git config: where it sends git for hooks (core.hooksPath) and which
// files it includes (HooksPaths, a lenient reading: mounts protects them
// on Linux and darwin in the Seatbelt profile, both the same way); and
// whether a sandboxed command may leave a config as it would (Check: a
// strict reading, exactly git's, and a list of the variables git writes
// in ordinary work, none of which runs a command). It does not know where
// a config lies nor who wrote it: the runtime's guard calls Check when git
// renames config.lock onto config, and writes the bytes Check accepted.
package gitconfig

import (
	"io/fs"
	"path"
	"strings"
)

// HooksPaths returns where the config of the repository at root (its git
// directories gitDirs) sends git for hooks (core.hooksPath), absolute:
// relative to the working tree, as git reads it. Husky's ".husky/_" runs
// the scripts in ".husky": both are returned. And the files the config
// includes ([include] and [includeIf] path, relative to the git
// directory): they are its config, and could set core.hooksPath or
// core.fsmonitor.
func HooksPaths(fsys fs.FS, root string, gitDirs []string) []string {
	var out []string
	for _, g := range gitDirs {
		for _, name := range []string{"config", "config.worktree"} {
			data, err := fs.ReadFile(fsys, fsName(path.Join(g, name)))
			if err != nil {
				continue
			}
			for _, e := range Entries(data) {
				include := e.Key == "path" && (e.Section == "include" || strings.HasPrefix(e.Section, "includeif"))
				if !include && (e.Section != "core" || e.Key != "hookspath") {
					continue
				}
				v := e.Value
				if v == "" || strings.HasPrefix(v, "~") {
					// The home is outside the writable roots, or one of
					// them with its own protections.
					continue
				}
				switch {
				case path.IsAbs(v):
				case include:
					// An included file is relative to the including one.
					v = path.Join(g, v)
				default:
					v = path.Join(root, v)
				}
				v = path.Clean(v)
				if v == root {
					continue
				}
				out = append(out, v)
				if !include && path.Base(v) == "_" && path.Dir(v) != root {
					out = append(out, path.Dir(v))
				}
			}
		}
	}
	return out
}

// Entry is one "key = value" line of a git config file.
type Entry struct {
	Section, Key, Value string
}

// Entries reads the "key = value" lines of a git config file: the
// section and the key lowercased, the value without its comment and
// quotes.
func Entries(data []byte) []Entry {
	var out []Entry
	section := ""
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "[") {
			// git reads a key on the header's line too: "[core] hooksPath = x"
			section, line = header(line)
			section = strings.ToLower(strings.TrimSpace(section))
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		for continues(v) && i+1 < len(lines) {
			i++
			v += "\n" + strings.TrimSuffix(lines[i], "\r")
		}
		out = append(out, Entry{section, strings.ToLower(strings.TrimSpace(k)), value(v)})
	}
	return out
}

// continues reports whether a value goes on on the next line: its line
// ends with a backslash that escapes nothing, outside a comment.
func continues(v string) bool {
	quoted := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && i == len(v)-1:
			return true
		case c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ';' || c == '#'):
			return false
		}
	}
	return false
}

// header splits a line that opens a section into the section's name
// (what lies between "[" and the "]" that is not inside a quoted
// subsection) and the rest of the line.
func header(line string) (section, rest string) {
	quoted := false
	for i := 1; i < len(line); i++ {
		switch c := line[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ']':
			return line[1:i], strings.TrimSpace(line[i+1:])
		}
	}
	return line[1:], ""
}

// value reads a value as git does: double quotes anywhere keep what they
// hold (comment characters and spaces included), a backslash escapes the
// next character (before a newline, it joins the lines), and outside
// quotes ";" or "#" starts a comment:
// `".husky/_" # husky` is .husky/_.
func value(v string) string {
	v = strings.TrimLeft(v, " \t")
	var b strings.Builder
	quoted := false
	end := 0 // the length of b up to the last character that is kept as it is
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case '\n':
				// a line continued on the next one
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			default:
				b.WriteByte(v[i])
			}
			end = b.Len()
			continue
		case c == '"':
			quoted = !quoted
			end = b.Len()
			continue
		case !quoted && (c == ';' || c == '#'):
			return b.String()[:end]
		}
		b.WriteByte(c)
		if quoted || (c != ' ' && c != '\t') {
			end = b.Len()
		}
	}
	return b.String()[:end]
}

// fsName turns an absolute path into a name for fs.FS.
func fsName(p string) string {
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}
