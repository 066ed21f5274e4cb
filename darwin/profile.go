package darwin

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cordon.dev/cordon/internal/gitconfig"
	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/policy"
)

// MessagePrefix starts the message every denial of a cordon profile
// carries in the unified log; the run's tag follows it.
const MessagePrefix = "cordon:"

// Request is what a profile needs to know about one run beyond the policy.
type Request struct {
	// Cwd is the command's working directory, absolute.
	Cwd string
	// Home is the user's home directory; empty means the policy's.
	Home string
	// TempDir is the run's private temporary directory, the command's
	// TMPDIR: writable, and not subject to the protections of the writable
	// roots (it is cordon's, and removed after the run). Empty means none.
	TempDir string
	// Caches are the directories cordon points the package managers'
	// caches at (runtime.OpenCaches' redirects): writable and readable as
	// the temporary directory is (they are cordon's, kept per workspace).
	Caches []Cache
	// HTTPProxyPort and SOCKSProxyPort are the loopback ports of cordon's
	// filtering proxy, the only network destinations of a policy that
	// allows any domain; such a policy needs at least one of them.
	HTTPProxyPort, SOCKSProxyPort int
	// Tag identifies the run: every denial is reported as "cordon:<Tag>"
	// in the unified log. Letters, digits, '.', '_' and '-', at most 64.
	Tag string
	// Terminal gives the command a pseudo-terminal of its own.
	Terminal bool
	// TTY is that terminal's device (/dev/ttysN) when it is already open.
	// Without it, every terminal device of the user's is reachable.
	TTY string
	// Executable is cordon's own binary, which the host runs next (as a
	// Claude Code hook, for the next command): not writable wherever the
	// writable roots are. Empty means not known.
	Executable string
	// FS is the host file system rooted at "/". The compiler follows the
	// symbolic links in the policy's paths there and reads the .git files
	// of the writable roots to find the git directories of worktrees and
	// submodules. Nil reads nothing: paths are only rewritten from /tmp,
	// /var and /etc to /private.
	FS fs.FS
}

// Cache is a package cache redirected to a directory of cordon's.
type Cache struct {
	// Dir is the directory; Env the environment entry (NAME=value) that
	// points the tool at it, set over the caller's.
	Dir, Env string
}

var (
	tagPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	ttyPattern = regexp.MustCompile(`^/dev/ttys[0-9]+$`)
)

// Profile compiles the policy for one run into a Seatbelt profile for
// sandbox-exec -p.
func Profile(p *policy.Policy, r Request) (string, error) {
	return compile(p, r)
}

// compiler holds one profile being written.
type compiler struct {
	p    *policy.Policy
	r    Request
	res  resolver
	b    builder
	home string

	roots     []root    // writable roots and the git directories they use
	temp      []pattern // the run's temporary directory and the package caches
	denyRead  []pattern
	allowRead []pattern
	creds     []pattern // credential stores: denied but for the allowRead paths inside them
	homeProt  []pattern // homeProtected
	own       []pattern // the caller's own configuration and cordon's settings files
	gitFiles  []pattern // .git files found in the writable roots (submodules, worktrees)
	nested    []nested  // policy.ProtectedBelow two levels below the writable roots, and more
	denyWrite []pattern
}

// nested is a name (policy.ProtectedBelow, or the directory one lies in)
// protected in a base (a writable root, the run's temporary directory, a
// trusted directory) and in the directories down to nestedDepth below it,
// but not in node_modules.
type nested struct {
	base pattern // the root
	rel  string  // the name, relative to each of those directories
	pin  bool    // a directory the names lie in: not created, renamed or removed
}

// nestedDepth is how far below a writable root the nested names are
// protected: as deep as Linux protects them (mounts.NestedDepth, which
// this package does not import).
const nestedDepth = 2

// root is one writable root and what stays protected in it.
type root struct {
	pat       pattern
	protected []pattern // below pat, every spelling
	git       bool      // pat's .git may be a file pointing at its git directory
}

func compile(p *policy.Policy, r Request) (string, error) {
	c, err := newCompiler(p, r)
	if err != nil {
		return "", err
	}
	c.collect()
	for _, section := range []func(){c.header, c.processes, c.system, c.reads, c.devices, c.writes, c.network} {
		section()
	}
	if c.b.err != nil {
		return "", c.b.err
	}
	return c.b.b.String(), nil
}

func newCompiler(p *policy.Policy, r Request) (*compiler, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: no policy", ErrInvalid)
	}
	c := &compiler{p: p, r: r, res: resolver{fsys: r.FS}, home: r.Home}
	if c.home == "" {
		c.home = p.Home
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	c.b.message = c.b.q(MessagePrefix + r.Tag)
	return c, nil
}

// check refuses a request the profile could not express faithfully.
func (c *compiler) check() error {
	p, r := c.p, c.r
	if !tagPattern.MatchString(r.Tag) {
		return fmt.Errorf("%w: run tag %q (want 1 to 64 letters, digits, '.', '_' or '-')", ErrInvalid, r.Tag)
	}
	dirs := [][2]string{{"workspace", p.Workspace}, {"working directory", r.Cwd}, {"home directory", c.home}}
	if r.TempDir != "" {
		dirs = append(dirs, [2]string{"temporary directory", r.TempDir})
	}
	for _, k := range r.Caches {
		if name, _, ok := strings.Cut(k.Env, "="); !ok || name == "" {
			return fmt.Errorf("%w: package cache %q: environment entry %q is not NAME=value", ErrInvalid, k.Dir, k.Env)
		}
		dirs = append(dirs, [2]string{"package cache", k.Dir})
	}
	for _, d := range dirs {
		if !path.IsAbs(d[1]) {
			return fmt.Errorf("%w: %s %q is not absolute", ErrInvalid, d[0], d[1])
		}
	}
	lists := []struct {
		key   string
		paths []string
	}{
		{"allowRead", p.Filesystem.AllowRead}, {"denyRead", p.Filesystem.DenyRead},
		{"allowWrite", p.Filesystem.AllowWrite}, {"denyWrite", p.Filesystem.DenyWrite},
		{"allowUnixSockets", p.Network.AllowUnixSockets},
	}
	for _, l := range lists {
		for _, e := range l.paths {
			if !path.IsAbs(e) {
				return fmt.Errorf("%w: %s entry %q is not absolute", ErrInvalid, l.key, e)
			}
		}
	}
	if r.TTY != "" && !ttyPattern.MatchString(r.TTY) {
		return fmt.Errorf("%w: terminal %q is not a /dev/ttysN device", ErrInvalid, r.TTY)
	}
	for _, port := range []int{r.HTTPProxyPort, r.SOCKSProxyPort} {
		if port < 0 || port > 65535 {
			return fmt.Errorf("%w: proxy port %d", ErrInvalid, port)
		}
	}
	if networkOn(p) && r.HTTPProxyPort == 0 && r.SOCKSProxyPort == 0 {
		return fmt.Errorf("%w: the policy allows network domains but no proxy port was given: the proxy is the only way out", ErrInvalid)
	}
	return nil
}

// networkOn reports whether the policy may allow any network destination,
// so that the command gets the proxy: some allowedDomains, or an ask
// command that may allow others (as spec.Proxied on Linux). An empty
// allowedDomains without one means no network at all.
func networkOn(p *policy.Policy) bool {
	return len(p.Network.AllowedDomains) > 0 || p.Network.AskCommand != ""
}

// collect turns the policy's paths into patterns, in every spelling.
func (c *compiler) collect() {
	inWritable, inGitDir := c.protected()
	var redirects []string
	var nestedProt []pattern
	for _, w := range c.p.WritableRoots() {
		pts := c.patterns(w)
		if w == c.p.Workspace {
			pts = c.spell(literalPattern(path.Clean(w))) // a directory, not a pattern
		}
		for _, pt := range pts {
			if pt.static() == 0 {
				c.b.fail(fmt.Errorf("%w: writable root %s would make the whole host writable", ErrInvalid, pt))
			}
			c.addRoot(pt, inWritable, true)
		}
		if !c.literalOnly(w) && w != c.p.Workspace {
			continue
		}
		real := c.res.resolve(policy.UnescapePattern(w))
		redirects = append(redirects, c.repository(real, inGitDir)...)
		for _, sub := range c.res.nestedRepositories(real) {
			// Another repository in the root (a clone in ~/code, a
			// vendored checkout) gets what the root's own .git gets.
			for _, name := range inWritable {
				if rel, ok := strings.CutPrefix(name, ".git/"); ok && c.res.isDir(path.Join(sub, ".git")) {
					pt, _ := globPattern(path.Join(sub, ".git", rel))
					nestedProt = append(nestedProt, c.spell(pt)...)
				}
			}
			redirects = append(redirects, c.repository(sub, inGitDir)...)
		}
	}
	for _, r := range redirects {
		nestedProt = append(nestedProt, c.spell(literalPattern(r))...)
	}
	c.protectIn(nestedProt)
	if c.r.TempDir != "" {
		c.temp = c.spell(literalPattern(c.r.TempDir))
	}
	for _, k := range c.r.Caches {
		c.temp = append(c.temp, c.spell(literalPattern(path.Clean(k.Dir)))...)
	}
	c.temp = uniquePatterns(c.temp)
	c.collectNested()
	fsys := c.p.Filesystem
	c.creds = c.credentialStores()
	for _, h := range homeProtected {
		c.homeProt = append(c.homeProt, c.spell(literalPattern(path.Join(c.home, h)))...)
	}
	// What Linux binds read-only whatever the roots (spec's ownPaths): a
	// writable root over the home must not reach git's, the shells' or the
	// agents' own configuration, nor any settings file cordon reads.
	var own []pattern
	for _, f := range append(c.p.OwnPaths(c.home), c.r.Executable) {
		if path.IsAbs(f) {
			own = append(own, c.spell(literalPattern(path.Clean(f)))...)
		}
	}
	c.own = without(uniquePatterns(own), c.creds)
	// The credential stores have a rule of their own.
	c.denyRead = without(c.all(fsys.DenyRead), c.creds)
	c.allowRead = c.all(fsys.AllowRead)
	c.denyWrite = c.all(fsys.DenyWrite)
}

// collectNested protects policy.ProtectedBelow in each writable root and
// the run's temporary directory and down to nestedDepth below them, as
// Linux does, and pins the directories those names lie in (.claude,
// .cordon, .vscode) there: renamed into place (`mkdir x; edit
// x/settings.json; mv x .claude`) they would bring their content past the
// deny. The temporary directory is covered so that a directory moved there
// and back is too. node_modules is left out, as on Linux: packages ship
// .vscode folders, and no one starts an agent or an editor there.
func (c *compiler) collectNested() {
	var bases []pattern
	for _, r := range c.roots {
		if r.git {
			bases = append(bases, r.pat)
		}
	}
	bases = append(bases, c.temp...)
	// The trusted directories (cordon.trustedWorkspaces) and two levels
	// below them, as on Linux: the settings of a workspace there widen its
	// own sandbox the next time it runs. (Outside the writable roots the
	// rules change nothing.)
	for _, t := range c.p.TrustedDirs {
		if path.IsAbs(t) {
			bases = append(bases, c.spell(literalPattern(path.Clean(t)))...)
		}
	}
	bases = uniquePatterns(bases)
	var dirs []string
	for _, rel := range policy.ProtectedBelow {
		if d := path.Dir(rel); d != "." && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, b := range bases {
		for _, rel := range policy.ProtectedBelow {
			c.nested = append(c.nested, nested{base: b, rel: rel})
		}
		for _, d := range dirs {
			c.nested = append(c.nested, nested{base: b, rel: d, pin: true})
		}
	}
}

// nestedRegex matches n's name (and with subtree what is below it) in its
// root and the directories down to nestedDepth below it, in either case.
func nestedRegex(n nested, subtree bool) (string, error) {
	name, err := literalPattern("/" + n.rel).foldedRegex(subtree)
	if err != nil {
		return "", err
	}
	return below(n.base, strings.Repeat("(/[^/]+)?", nestedDepth)+strings.TrimPrefix(name, "^"))
}

// below returns the folded regex of base followed by tail, base folded as
// far as the whole fits in a profile's string.
func below(base pattern, tail string) (string, error) {
	re, err := base.foldedWithin(false, maxString-quotedLen(tail)+2)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(re, "$") + tail, nil
}

// hooksRegex matches the .git/hooks directory of every repository in the
// writable root base, at any depth, and what is below it, in either case.
func hooksRegex(base pattern) (string, error) {
	name, err := literalPattern("/.git/hooks").foldedRegex(true)
	if err != nil {
		return "", err
	}
	return below(base, "(/.*)?"+strings.TrimPrefix(name, "^"))
}

// bareDepth is how far below a writable root a planted bare repository
// is refused: as deep as Linux looks for them after the run (its
// bareRepoDepth); git finds a repository by walking up from where it
// runs, so the shallow ones are those a later git command would trip on.
const bareDepth = 3

// bareSentinels match a file named HEAD in each writable root and down to
// bareDepth below it, in either case, but not inside a .git directory
// (git's own HEAD, those of worktrees and submodules,
// refs/remotes/origin/HEAD). Not in the run's temporary directory, as on
// Linux: tests make bare repositories there, and it is removed.
func (c *compiler) bareSentinels() []string {
	var out []string
	for _, r := range c.roots {
		if !r.git {
			continue // a git directory, where HEAD files belong
		}
		head, err := below(r.pat, strings.Repeat("(/[^/]+)?", bareDepth)+"/"+quoteName("HEAD", true)+"$")
		if err != nil {
			c.b.fail(err)
			continue
		}
		inGit, err := r.pat.regex(false)
		if err != nil {
			c.b.fail(err)
			continue
		}
		inGit = strings.TrimSuffix(inGit, "$") + `(/.*)?/\.git/.*$`
		out = append(out, all(c.b.filter("regex", head), "(require-not "+c.b.filter("regex", inGit)+")"))
	}
	return out
}

// nestedFilter matches n outside node_modules (as written: a node_modules
// in another case is not left out).
func (c *compiler) nestedFilter(n nested, subtree bool) string {
	re, err := nestedRegex(n, subtree)
	if err != nil {
		c.b.fail(err)
	}
	except, err := nodeModulesRegex(n)
	if err != nil {
		c.b.fail(err)
	}
	return all(c.b.filter("regex", re), "(require-not "+c.b.filter("regex", except)+")")
}

// nodeModulesRegex matches the node_modules directories, and what is
// below them, where n's names are not protected: in n's base and down to
// nestedDepth below it.
func nodeModulesRegex(n nested) (string, error) {
	re, err := n.base.regex(false)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(re, "$") + strings.Repeat("(/[^/]+)?", nestedDepth-1) + "/node_modules(/.*)?$", nil
}

// repository adds what the repository whose working tree is dir needs:
// its git directories elsewhere (a worktree's, a submodule's) writable
// with their own protections, its .git file protected, and it returns
// where its config sends git (core.hooksPath, husky's .husky with it, the
// files it includes), which Linux's mount plan protects: hooks or a config
// the command wrote there would run on the host at the next git command.
func (c *compiler) repository(dir string, inGitDir []string) (redirects []string) {
	dirs, files := c.res.gitDirs(dir)
	for _, g := range dirs {
		c.addRoot(literalPattern(g), inGitDir, false)
	}
	for _, f := range files {
		c.gitFiles = append(c.gitFiles, c.spell(literalPattern(f))...)
	}
	if own := path.Join(dir, ".git"); c.res.isDir(own) {
		dirs = append(dirs, own)
	}
	if c.res.fsys == nil {
		return nil
	}
	return gitconfig.HooksPaths(c.res.fsys, dir, dirs)
}

// protectIn adds each of pts to the protected paths of the writable root
// or git directory that holds it. Outside them, it is read-only anyway.
func (c *compiler) protectIn(pts []pattern) {
	for _, pt := range pts {
		static := pt.staticPath()
		for i := range c.roots {
			root, ok := c.roots[i].pat.literal()
			if !ok || !paths.Below(static, root) {
				continue
			}
			if !slices.ContainsFunc(c.roots[i].protected, func(p pattern) bool { return p.key() == pt.key() }) {
				c.roots[i].protected = append(c.roots[i].protected, pt)
			}
			break
		}
	}
}

// protected returns the names protected in each writable root and in each
// git directory: the policy's, and the git redirects.
func (c *compiler) protected() (inWritable, inGitDir []string) {
	inWritable, inGitDir = c.p.Protected()
	for _, g := range gitRedirects {
		if !slices.Contains(inGitDir, g) {
			inWritable = append(inWritable, ".git/"+g)
			inGitDir = append(inGitDir, g)
		}
	}
	return inWritable, inGitDir
}

// addRoot adds a writable root with the names protected below it, unless
// it is there already.
func (c *compiler) addRoot(pt pattern, protected []string, git bool) {
	for _, r := range c.roots {
		if r.pat.key() == pt.key() {
			return
		}
	}
	r := root{pat: pt, git: git}
	for _, name := range protected {
		rel, _ := globPattern("/" + name) // "modules/*/hooks": every submodule
		r.protected = append(r.protected, c.spell(pt.join(rel))...)
	}
	c.roots = append(c.roots, r)
}

// credentialStores are the default policy's denyRead and macOS's own
// credential stores. An allowRead inside one re-opens that path, as on
// Linux; nothing makes them writable.
func (c *compiler) credentialStores() []pattern {
	def, err := policy.Default(c.p.Workspace, c.home)
	if err != nil {
		c.b.fail(err)
		return nil
	}
	stores := c.all(def.Filesystem.DenyRead)
	for _, s := range darwinCredentialStores {
		stores = append(stores, c.spell(literalPattern(path.Join(c.home, s)))...)
	}
	return uniquePatterns(stores)
}

// all returns the patterns of a list of the policy's paths.
func (c *compiler) all(paths []string) []pattern {
	var out []pattern
	for _, p := range paths {
		out = append(out, c.patterns(p)...)
	}
	return uniquePatterns(out)
}

// patterns reads one entry of the policy's file system lists: a pattern
// (see policy.IsGlob), its braces expanded, each alternative in every
// spelling. A name, escapes removed, is taken as it is.
func (c *compiler) patterns(p string) []pattern {
	if !policy.IsGlob(p) {
		return c.spell(literalPattern(path.Clean(policy.UnescapePattern(p))))
	}
	alts, err := expandBraces(p)
	if err != nil {
		c.b.fail(err)
		return nil
	}
	var out []pattern
	for _, alt := range alts {
		pt, _ := globPattern(path.Clean(alt)) // "a/../b" would never match: Seatbelt sees clean paths
		out = append(out, c.spell(pt)...)
	}
	return uniquePatterns(out)
}

// literalOnly reports whether the policy's entry p names one path.
func (c *compiler) literalOnly(p string) bool { return !policy.IsGlob(p) }

// spell returns pt with its leading names canonicalised and, when that
// differs, resolved through the file system's symbolic links.
func (c *compiler) spell(pt pattern) []pattern {
	n := pt.static()
	var out []pattern
	for _, s := range c.res.spellings(pattern{segs: pt.segs[:n]}.String()) {
		out = append(out, pt.rebase(n, s))
	}
	return out
}

func uniquePatterns(pts []pattern) []pattern {
	seen := map[string]bool{}
	var out []pattern
	for _, pt := range pts {
		if k := pt.key(); !seen[k] {
			seen[k] = true
			out = append(out, pt)
		}
	}
	return out
}

// without returns the patterns of pts that are not in drop.
func without(pts, drop []pattern) []pattern {
	var out []pattern
	for _, pt := range pts {
		if !slices.ContainsFunc(drop, func(d pattern) bool { return d.key() == pt.key() }) {
			out = append(out, pt)
		}
	}
	return out
}

// allowFilter matches pt and everything below it (a subpath, or a regex
// with a subtree tail).
func (c *compiler) allowFilter(pt pattern) string {
	if lit, ok := pt.literal(); ok {
		return c.b.filter("subpath", lit)
	}
	return c.regex(pt, true)
}

// denyFilters match pt and everything below it, in either case (see
// pattern.foldedRegex): also while the name does not exist yet.
func (c *compiler) denyFilters(pts ...pattern) []string {
	var out []string
	for _, pt := range pts {
		out = append(out, c.folded(pt, true))
	}
	return out
}

// exact matches pt itself, as it is spelled.
func (c *compiler) exact(pt pattern) string {
	if lit, ok := pt.literal(); ok {
		return c.b.filter("literal", lit)
	}
	return c.regex(pt, false)
}

// ancestorFilters match the directories that lead to each of pts, as they
// are spelled: for an allow.
func (c *compiler) ancestorFilters(pts ...pattern) []string {
	var out []string
	for _, pt := range pts {
		for _, a := range pt.ancestors() {
			out = append(out, c.exact(a))
		}
	}
	return out
}

// pinFilters match the directories that lead to each of pts, in either
// case: for a deny.
func (c *compiler) pinFilters(pts ...pattern) []string {
	var out []string
	for _, pt := range pts {
		for _, a := range pt.ancestors() {
			out = append(out, c.folded(a, false))
		}
	}
	return out
}

// folded matches pt (and with subtree what is below it) in either case.
func (c *compiler) folded(pt pattern, subtree bool) string {
	re, err := pt.foldedRegex(subtree)
	if err != nil {
		c.b.fail(err)
	}
	return c.b.filter("regex", re)
}

func (c *compiler) regex(pt pattern, subtree bool) string {
	re, err := pt.regex(subtree)
	if err != nil {
		c.b.fail(err)
	}
	return c.b.filter("regex", re)
}

func (c *compiler) header() {
	c.b.line("; cordon's Seatbelt profile (SBPL) for /usr/bin/sandbox-exec -p.")
	c.b.line(fmt.Sprintf("; run %s: workspace %s (%s), working directory %s", c.b.q(c.r.Tag), c.b.q(c.p.Workspace), c.p.Mode, c.b.q(c.r.Cwd)))
	c.b.line(";")
	c.b.line("; Of the rules written for an operation, the LAST one that matches decides,")
	c.b.line("; before the rules of the more general one (file-write* for file-write-data).")
	c.b.line("; Every deny that carves something out of an allow comes after that allow and")
	c.b.line("; names the same operations or narrower ones: keep it so, and the profile")
	c.b.line("; means the same read as one list. Every deny reports the run's tag in the")
	c.b.line("; unified log.")
	c.b.line("(version 1)")
	c.b.line("(deny default (with message " + c.b.message + "))")
}

func (c *compiler) processes() {
	c.b.comment("Processes: the command and what it starts. Signals, process information\nand task ports only within this sandbox.")
	c.b.unfiltered("allow", "process-fork")
	c.b.unfiltered("allow", "process-exec")
	for _, op := range []string{"signal", "process-info*", "mach-priv-task-port"} {
		c.b.rule("", "allow", []string{op}, []string{"(target same-sandbox)"})
	}
}

func (c *compiler) system() {
	c.b.comment("System facts runtimes size themselves by, and the daemons the C library\nand CoreFoundation reach on an ordinary path. Not the keychain\n(SecurityServer), Launch Services (open would start apps outside the\nsandbox), or Apple Events.")
	var sysctls []string
	for _, n := range sysctlNames {
		sysctls = append(sysctls, c.b.filter("sysctl-name", n))
	}
	for _, n := range sysctlPrefixes {
		sysctls = append(sysctls, c.b.filter("sysctl-name-prefix", n))
	}
	c.b.rule("", "allow", []string{"sysctl-read"}, sysctls)
	var writable []string
	for _, n := range sysctlWritable {
		writable = append(writable, c.b.filter("sysctl-name", n))
	}
	c.b.rule("", "allow", []string{"sysctl-write"}, writable)
	// No mach-host*: it is mach-host-exception-port-set and
	// mach-host-special-port-set, not host_processor_info (Node's
	// os.cpus() works under sandbox-runtime's profile, which lacks it). A
	// command running as root could take the host's exception port, and
	// with it the task port of every process that crashes outside.
	services := machServices
	if c.p.Sandbox.EnableWeakerNetworkIsolation && networkOn(c.p) {
		services = append(append([]string(nil), services...), trustdServices...)
	}
	var names []string
	for _, s := range services {
		names = append(names, c.b.filter("global-name", s))
	}
	c.b.rule("", "allow", []string{"mach-lookup"}, names)
	if extra := c.p.Network.AllowMachLookup; len(extra) > 0 {
		names = nil
		for _, s := range extra {
			if prefix, ok := strings.CutSuffix(s, "*"); ok {
				names = append(names, c.b.filter("global-name-prefix", prefix))
			} else {
				names = append(names, c.b.filter("global-name", s))
			}
		}
		c.b.rule("The services the settings add (sandbox.network.allowMachLookup): 1Password's\nCLI, Playwright, the iOS Simulator and other tools that talk over XPC.", "allow", []string{"mach-lookup"}, names)
	}
	c.b.rule("", "allow", []string{"iokit-open"}, []string{c.b.filter("iokit-registry-entry-class", "RootDomainUserClient")})
	// POSIX semaphores and shared memory: Python's multiprocessing.
	c.b.unfiltered("allow", "ipc-posix-sem")
	c.b.unfiltered("allow", "ipc-posix-shm")
	c.b.unfiltered("allow", "user-preference-read")
}

func (c *compiler) reads() {
	c.b.comment("Reads: everywhere but the device nodes, denyRead and the credential stores.")
	c.b.unfiltered("allow", "file-read*", "file-test-existence")
	c.b.rule("No device node is readable but those allowed below: not the disks, not\nthe user's other terminals.",
		"deny", []string{"file-read-data"}, []string{c.b.filter("subpath", "/dev")})
	var allow []string
	for _, pt := range c.allowRead {
		allow = append(allow, c.allowFilter(pt))
	}
	c.b.rule("allowRead.", "allow", []string{"file-read*"}, allow)
	// file-test-existence is named with file-read*: whether it falls back
	// to file-read* is not published, and an unfiltered allow of its own
	// would answer for every path whatever file-read* denies.
	var denyFilters []string
	var reopened []pattern
	readable := c.readable()
	for _, pt := range c.denyRead {
		f, in := c.readDenied(pt, readable)
		denyFilters = append(denyFilters, f...)
		reopened = append(reopened, in...)
	}
	c.b.rule("denyRead, minus the allowRead paths and the writable roots inside it: the\nmore specific rule wins, so allowRead (or allowWrite) re-opens inside\ndenyRead and denyRead closes inside allowRead.",
		"deny", []string{"file-read*", "file-test-existence"}, denyFilters)
	var credFilters []string
	for _, pt := range c.creds {
		f, _ := c.readDenied(pt, c.allowRead)
		credFilters = append(credFilters, f...)
	}
	c.b.rule("Credential stores, minus the allowRead paths inside them.",
		"deny", []string{"file-read*", "file-test-existence"}, credFilters)
	c.b.rule("The directories that lead to an allowRead path, or to a writable root\ninside denyRead, can be stat'ed (realpath needs them); not listed, not read.",
		"allow", []string{"file-read-metadata", "file-test-existence"}, c.ancestorFilters(append(append([]pattern(nil), c.allowRead...), reopened...)...))
}

// readable returns what re-opens a denyRead path inside which it lies: the
// allowRead paths, the writable roots and the run's temporary directory,
// as on Linux, where their binds lie over the denied one.
func (c *compiler) readable() []pattern {
	keep := append([]pattern(nil), c.allowRead...)
	for _, r := range c.roots {
		keep = append(keep, r.pat)
	}
	return append(keep, c.temp...)
}

// readDenied returns the filters of the read-denied pattern d minus the
// patterns of keep inside it (none when one of them is d itself), and
// those patterns.
func (c *compiler) readDenied(d pattern, keep []pattern) (filters []string, in []pattern) {
	var except []string
	for _, a := range keep {
		if a.key() == d.key() {
			return nil, []pattern{a}
		}
		if inside(a, d) {
			except = append(except, "(require-not "+c.allowFilter(a)+")")
			in = append(in, a)
		}
	}
	area := c.folded(d, true)
	if len(except) > 0 {
		area = all(append([]string{area}, unique(except)...)...)
	}
	return []string{area}, in
}

// inside reports whether what a matches lies in what d matches (d and
// what is below it). For a glob d it asks whether d matches a path shaped
// like a's (every glob component replaced by a name): a leaf glob like
// "~/**/.env" holds no directory an allowRead names, and a region like
// "~/**" holds them all.
func inside(a, d pattern) bool {
	sample := a
	sample.segs = slices.Clone(a.segs)
	for i, s := range sample.segs {
		if s.glob {
			sample.segs[i] = segment{text: "x"}
		}
	}
	sp := sample.String()
	if lit, ok := d.literal(); ok {
		return paths.Under(sp, lit)
	}
	re, err := d.regex(true)
	if err != nil {
		return false
	}
	m, err := regexp.MatchString(re, sp)
	return err == nil && m
}

func (c *compiler) devices() {
	c.b.comment("Devices a shell uses. Not /dev/dtracehelper: it only registers USDT\nprobes with the kernel, a surface no command needs.")
	c.b.rule("", "allow", []string{"file-read-data"}, []string{c.b.filter("literal", "/dev"), c.b.filter("literal", "/dev/autofs_nowait")})
	var plain []string
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"} {
		plain = append(plain, c.b.filter("literal", d))
	}
	c.b.rule("", "allow", []string{"file-read-data", "file-write-data", "file-ioctl"}, plain)
	c.b.rule("", "allow", []string{"file-read-data", "file-write-data"}, []string{c.b.filter("subpath", "/dev/fd")})
	if !c.r.Terminal {
		return
	}
	c.b.comment("The command's own terminal, and the pseudo-terminals it opens itself\n(which carry the com.apple.sandbox.pty extension).")
	c.b.unfiltered("allow", "pseudo-tty")
	ttys := []string{c.b.filter("literal", "/dev/tty"), c.b.filter("literal", "/dev/ptmx")}
	if c.r.TTY != "" {
		ttys = append(ttys, c.b.filter("literal", c.r.TTY))
	} else {
		c.b.line("; The run's terminal device is not known: every terminal is reachable.")
		ttys = append(ttys, c.b.filter("regex", `^/dev/ttys[0-9]+$`))
	}
	ttys = append(ttys, all(c.b.filter("regex", `^/dev/ttys[0-9]+$`), c.b.filter("extension", "com.apple.sandbox.pty")))
	c.b.rule("", "allow", []string{"file-read-data", "file-write-data", "file-ioctl"}, ttys)
}

func (c *compiler) writes() {
	var allow []string
	for _, r := range c.roots {
		allow = append(allow, c.allowFilter(r.pat))
	}
	for _, pt := range c.temp {
		allow = append(allow, c.allowFilter(pt))
	}
	what := "Writes: the writable roots and the run's temporary directory only."
	if len(c.r.Caches) > 0 {
		what = "Writes: the writable roots, the run's temporary directory and the\npackage caches cordon keeps for the workspace only."
	}
	c.b.rule(what, "allow", []string{"file-write*"}, allow)
	if len(allow) == 0 {
		c.b.comment("Writes: nowhere.")
	}
	// Named, not left to the hierarchy: whether file-link and file-clone
	// fall back to file-write* or to file* is not published.
	c.b.rule("Hard links and clones, nowhere: a link to a read-denied file inside a\nwritable root would be a readable alias of it.",
		"deny", []string{"file-link", "file-clone"}, []string{c.b.filter("subpath", "/")})

	c.b.rule("denyWrite.", "deny", []string{"file-write*"}, c.denyFilters(c.denyWrite...))

	var protected []pattern
	var gitFiles []string
	for _, r := range c.roots {
		protected = append(protected, r.protected...)
		if r.git {
			gitFiles = append(gitFiles, all(c.folded(r.pat.join(literalPattern("/.git")), false), "(vnode-type REGULAR-FILE)"))
		}
	}
	c.b.rule("Always protected, in every writable root and git directory: what runs\ncode outside the sandbox the next time git, a shell, an editor or an agent\nstarts there.",
		"deny", []string{"file-write*"}, c.denyFilters(protected...))
	var hooks []string
	for _, r := range c.roots {
		if r.git {
			re, err := hooksRegex(r.pat)
			if err != nil {
				c.b.fail(err)
			}
			hooks = append(hooks, c.b.filter("regex", re))
		}
	}
	c.b.rule("The hooks of every repository in the writable roots, at any depth: one\nmade during the run (git clone, git init) has none of its own, since the\ncommand's GIT_TEMPLATE_DIR is empty, and one planted there would run the\nnext time the user commits in it.",
		"deny", []string{"file-write*"}, hooks)
	for _, f := range uniquePatterns(c.gitFiles) {
		gitFiles = append(gitFiles, c.folded(f, false))
	}
	c.b.rule("A .git file points git at its git directory (worktrees, submodules):\nrewritten, it would point at hooks of the command's making.",
		"deny", []string{"file-write*"}, gitFiles)
	c.b.rule("Wherever the writable roots are: the credential stores, several of which\nname commands the host runs (ssh's ProxyCommand, AWS's credential_process,\nkubectl's exec plugins, docker's credential helpers), and launchd's agents.",
		"deny", []string{"file-write*"}, c.denyFilters(append(append([]pattern(nil), c.creds...), c.homeProt...)...))
	c.b.rule("Wherever the writable roots are: git's, the shells' and the agents' own\nconfiguration in the home directory, and every settings file cordon reads.",
		"deny", []string{"file-write*"}, c.denyFilters(c.own...))

	var below, pins []string
	for _, n := range c.nested {
		if n.pin {
			pins = append(pins, c.nestedFilter(n, false))
		} else {
			below = append(below, c.nestedFilter(n, true))
		}
	}
	c.b.rule("In the writable roots, the temporary directory and two levels below them\n(but not in node_modules): the settings an agent or an editor started there\nreads, and the hooks, commands and tasks they run.",
		"deny", []string{"file-write*"}, below)
	c.b.rule("The directories those lie in cannot be created, renamed or removed there:\nrenamed into place, they would bring what the command wrote in them.",
		"deny", []string{"file-write-unlink", "file-write-create"}, pins)
	c.b.rule("No HEAD file is created outside a .git directory, in the writable roots and\nthree levels below them: beside objects/ and refs/ it makes a bare\nrepository, whose config and hooks the next git command run there would use.",
		"deny", []string{"file-write-create"}, c.bareSentinels())

	pinned := slices.Concat(protected, c.denyWrite, c.creds, c.homeProt, c.own, c.gitFiles)
	c.b.rule("The directories that lead to a protected, denyWrite or credential path\ncannot be removed, renamed or created: `mv .git g; edit g/hooks; mv g .git`\nwould go around a rule on .git/hooks, and so would a new .git, or a\nsymbolic link named .git, brought in while none existed.",
		"deny", []string{"file-write-unlink", "file-write-create"}, c.pinFilters(pinned...))

	var moves []string
	for _, pt := range c.denyRead {
		f, _ := c.readDenied(pt, c.readable())
		moves = append(moves, f...)
	}
	// (The credential stores are not writable at all, see above.)
	denied := append(append([]pattern(nil), c.denyRead...), c.creds...)
	c.b.rule("A read-denied path, and the directories that lead to it, cannot be\nremoved or renamed either: moved, it would be readable under its new name.",
		"deny", []string{"file-write-unlink"}, append(moves, c.pinFilters(denied...)...))
}

func (c *compiler) network() {
	c.b.comment("Network.")
	if c.p.Sandbox.AllowSocketpair || c.p.Network.AllowAllUnixSockets || len(c.p.Network.AllowUnixSockets) > 0 {
		c.b.line("; Unix sockets can be made (socket pairs: Node's child processes, Python's")
		c.b.line("; asyncio); connecting and binding them is restricted by path below.")
		c.b.rule("", "allow", []string{"system-socket"}, []string{"(socket-domain AF_UNIX)"})
	}
	c.b.rule("", "allow", []string{"network-outbound"}, []string{c.b.filter("literal", syslogSocket)})
	if networkOn(c.p) {
		var out []string
		for _, port := range []int{c.r.HTTPProxyPort, c.r.SOCKSProxyPort} {
			if port != 0 {
				out = append(out, "(remote ip "+c.b.q("localhost:"+strconv.Itoa(port))+")")
			}
		}
		c.b.rule("Out through cordon's filtering proxy only: it decides which domains.",
			"allow", []string{"network-outbound"}, out)
	} else {
		c.b.line("; No domain is allowed: no network.")
	}
	if c.p.Network.AllowLocalBinding {
		c.b.comment("allowLocalBinding: servers on the loopback interface, and connections to them.")
		local := "(local ip " + c.b.q("localhost:*") + ")"
		c.b.rule("", "allow", []string{"network-bind"}, []string{local})
		c.b.rule("", "allow", []string{"network-inbound"}, []string{local})
		c.b.rule("", "allow", []string{"network-outbound"}, []string{"(remote ip " + c.b.q("localhost:*") + ")"})
	}
	var bind, out []string
	if c.p.Network.AllowAllUnixSockets {
		any := c.b.filter("path-regex", "^/")
		bind, out = []string{"(local unix-socket " + any + ")"}, []string{"(remote unix-socket " + any + ")"}
	} else {
		for _, s := range c.p.Network.AllowUnixSockets {
			for _, sp := range c.res.spellings(s) {
				f := c.b.filter("subpath", sp)
				bind = append(bind, "(local unix-socket "+f+")")
				out = append(out, "(remote unix-socket "+f+")")
			}
		}
	}
	c.b.rule("Unix sockets: allowUnixSockets (or allowAllUnixSockets).", "allow", []string{"network-bind"}, bind)
	c.b.rule("", "allow", []string{"network-outbound"}, out)
}
