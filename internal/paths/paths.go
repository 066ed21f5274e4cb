// Package paths answers the one question every layer of cordon asks of
// two slash-separated, clean, absolute paths: is one inside the other?
// The path comes first, the directory second, and "/" holds every path.
package paths

import "strings"

// Under reports whether p is dir or lies below it. Every absolute path is
// under "/".
func Under(p, dir string) bool {
	return p == dir || Below(p, dir)
}

// Below reports whether p lies strictly below dir: "/a/b" is below "/a"
// and "/", "/ab" is not below "/a", and no path is below itself. A
// trailing slash on dir is ignored.
func Below(p, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	return len(p) > len(dir)+1 && p[len(dir)] == '/' && p[:len(dir)] == dir
}
