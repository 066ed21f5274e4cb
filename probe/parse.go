package probe

import (
	"cmp"
	"path"
	"slices"
	"strconv"
	"strings"

	"cordon.dev/cordon/internal/paths"
)

// mount is one line of /proc/self/mountinfo.
type mount struct {
	Root, Point, FSType, Source string
	// Super are the super block options (after the source).
	Super []string
}

// parseMountinfo parses /proc/PID/mountinfo. Malformed lines are skipped.
func parseMountinfo(data string) []mount {
	var ms []mount
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		// id parent major:minor root point options [optional...] - fstype source super
		sep := slices.Index(f, "-")
		if sep < 6 || len(f) < sep+3 {
			continue
		}
		m := mount{
			Root:   unescapeMount(f[3]),
			Point:  unescapeMount(f[4]),
			FSType: f[sep+1],
			Source: unescapeMount(f[sep+2]),
		}
		if len(f) > sep+3 {
			m.Super = strings.Split(f[sep+3], ",")
		}
		ms = append(ms, m)
	}
	return ms
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hierarchy is one mounted cgroup hierarchy.
type hierarchy struct {
	mount
	// Controllers are the v1 controllers it carries ("name=X" for a named
	// hierarchy); nil for the unified hierarchy.
	Controllers []string
}

// cgroupV1Options are super block options of a v1 cgroup mount that are
// not controllers.
var cgroupV1Options = map[string]bool{
	"rw": true, "ro": true, "xattr": true, "noprefix": true, "clone_children": true,
	"cpuset_v2_mode": true, "favordynmods": true, "nofavordynmods": true,
}

// favorDynmods reports whether a cgroup hierarchy is mounted with the
// favordynmods option.
func favorDynmods(ms []mount) bool {
	for _, m := range ms {
		if (m.FSType == "cgroup" || m.FSType == "cgroup2") && slices.Contains(m.Super, "favordynmods") {
			return true
		}
	}
	return false
}

// cgroupMounts returns the v1 hierarchies (one mount each, the one under
// /sys/fs/cgroup when there are several) and the unified hierarchy's
// mount, if any.
func cgroupMounts(ms []mount) (v1 []hierarchy, v2 *mount) {
	seen := map[string]int{}
	for _, m := range ms {
		switch m.FSType {
		case "cgroup2":
			if v2 == nil || !underSysFsCgroup(v2.Point) && underSysFsCgroup(m.Point) {
				m := m
				v2 = &m
			}
		case "cgroup":
			var ctrls []string
			for _, o := range m.Super {
				if cgroupV1Options[o] || strings.Contains(o, "=") && !strings.HasPrefix(o, "name=") {
					continue
				}
				ctrls = append(ctrls, o)
			}
			if len(ctrls) == 0 {
				continue
			}
			slices.Sort(ctrls)
			key := strings.Join(ctrls, ",")
			if i, ok := seen[key]; ok {
				if !underSysFsCgroup(v1[i].Point) && underSysFsCgroup(m.Point) {
					v1[i] = hierarchy{mount: m, Controllers: ctrls}
				}
				continue
			}
			seen[key] = len(v1)
			v1 = append(v1, hierarchy{mount: m, Controllers: ctrls})
		}
	}
	return v1, v2
}

func underSysFsCgroup(p string) bool {
	return p == "/sys/fs/cgroup" || strings.HasPrefix(p, "/sys/fs/cgroup/")
}

// cgroupLayout names the layout of the mounted hierarchies: hybrid when v1
// hierarchies with controllers and a cgroup2 mount are both there.
func cgroupLayout(v1 []hierarchy, v2 *mount) string {
	controllers := false
	for _, h := range v1 {
		for _, c := range h.Controllers {
			if !strings.HasPrefix(c, "name=") {
				controllers = true
			}
		}
	}
	switch {
	case controllers && v2 != nil:
		return LayoutHybrid
	case controllers || len(v1) > 0 && v2 == nil:
		return LayoutV1
	case v2 != nil:
		return LayoutV2
	}
	return LayoutNone
}

// v1Controllers lists the controllers of the hierarchies, sorted.
func v1Controllers(v1 []hierarchy) []string {
	out := []string{}
	for _, h := range v1 {
		out = append(out, h.Controllers...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// procCgroup is one line of /proc/PID/cgroup.
type procCgroup struct {
	ID          int
	Controllers []string
	Path        string
}

// parseProcCgroup parses /proc/PID/cgroup.
func parseProcCgroup(data string) []procCgroup {
	var out []procCgroup
	for _, line := range strings.Split(data, "\n") {
		id, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		ctrls, p, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(id)
		if err != nil {
			continue
		}
		c := procCgroup{ID: n, Path: p}
		if ctrls != "" {
			c.Controllers = strings.Split(ctrls, ",")
		}
		out = append(out, c)
	}
	return out
}

// ownV2Cgroup returns the unified hierarchy's entry ("0::PATH").
func ownV2Cgroup(cgs []procCgroup) (string, bool) {
	for _, c := range cgs {
		if c.ID == 0 && len(c.Controllers) == 0 {
			return c.Path, true
		}
	}
	return "", false
}

// cgroupDir returns the directory of cgroup p (as /proc/self/cgroup shows
// it) under mount m, or false when the mount does not show it.
func cgroupDir(m mount, p string) (string, bool) {
	if p == "" || !strings.HasPrefix(p, "/") {
		return "", false
	}
	root := m.Root
	if root == "/" {
		return path.Join(m.Point, p), true
	}
	if !paths.Under(p, root) {
		return "", false
	}
	return path.Join(m.Point, strings.TrimPrefix(p, root)), true
}

// procMasks lists the mounts on parts of /proc, other than binfmt_misc's
// (which sits on a permanently empty directory and hides nothing): the
// kernel refuses a fresh procfs in a user namespace while any is there.
func procMasks(ms []mount) []string {
	out := []string{}
	for _, m := range ms {
		if strings.HasPrefix(m.Point, "/proc/") && m.Point != "/proc/sys/fs/binfmt_misc" {
			out = append(out, m.Point)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// kernelAtLeast reports whether the kernel release is major.minor or newer;
// an unparsable release counts as new.
func kernelAtLeast(release string, major, minor int) bool {
	fields := strings.FieldsFunc(release, func(r rune) bool { return r < '0' || r > '9' })
	if len(fields) < 2 {
		return true
	}
	ma, err1 := strconv.Atoi(fields[0])
	mi, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return true
	}
	return ma > major || ma == major && mi >= minor
}

// containerEvidence is what detectContainer decides from.
type containerEvidence struct {
	DockerEnv           bool   // /.dockerenv exists
	ContainerEnv        string // /run/.containerenv's content, "" when absent
	HasContainerEnvFile bool
	SystemdContainer    string // /run/systemd/container
	Pid1Environ         string // "container=" in /proc/1/environ
	SelfEnv             string // "container" in the caller's environment
	CordonSandbox       bool   // CORDON_SANDBOX=1: inside a cordon sandbox
	KubernetesEnv       bool   // KUBERNETES_SERVICE_HOST is set
	KubernetesSA        bool   // /var/run/secrets/kubernetes.io exists
	Pid1Cgroup          string // /proc/1/cgroup
	OSRelease           string // /proc/sys/kernel/osrelease
}

// detectContainer names the container cordon runs in from the evidence,
// the innermost and most specific first: a cordon sandbox may run in a
// container, and a Kubernetes pod runs on some container engine.
func detectContainer(e containerEvidence) Container {
	c := Container{Evidence: []string{}}
	kinds := []string{}
	add := func(kind, why string) {
		c.Evidence = append(c.Evidence, why)
		kinds = append(kinds, kind)
	}
	if e.CordonSandbox {
		add(ContainerCordon, "CORDON_SANDBOX=1 in the environment")
	}
	if e.KubernetesEnv {
		add(ContainerKubernetes, "KUBERNETES_SERVICE_HOST is set")
	}
	if e.KubernetesSA {
		add(ContainerKubernetes, "/var/run/secrets/kubernetes.io exists")
	}
	if strings.Contains(e.Pid1Cgroup, "/kubepods") {
		add(ContainerKubernetes, "/proc/1/cgroup names kubepods")
	}
	for _, v := range []struct{ val, src string }{
		{e.Pid1Environ, "/proc/1/environ"},
		{e.SystemdContainer, "/run/systemd/container"},
		{e.SelfEnv, "the environment"},
	} {
		if v.val != "" {
			add(containerKind(v.val), "container="+v.val+" in "+v.src)
		}
	}
	if e.HasContainerEnvFile {
		kind := ContainerPodman
		if strings.Contains(e.ContainerEnv, `engine="`) && !strings.Contains(e.ContainerEnv, `engine="podman`) {
			kind = ContainerOther
		}
		add(kind, "/run/.containerenv exists")
	}
	if e.DockerEnv {
		add(ContainerDocker, "/.dockerenv exists")
	}
	switch cg := e.Pid1Cgroup; {
	case strings.Contains(cg, "/libpod") || strings.Contains(cg, "libpod-"):
		add(ContainerPodman, "/proc/1/cgroup names libpod")
	case strings.Contains(cg, "/docker/") || strings.Contains(cg, "/docker-") || strings.Contains(cg, "docker-"):
		add(ContainerDocker, "/proc/1/cgroup names docker")
	case strings.Contains(cg, "/lxc/") || strings.Contains(cg, "lxc.payload"):
		add(ContainerLXC, "/proc/1/cgroup names lxc")
	case strings.Contains(cg, "/machine.slice/machine-"):
		add(ContainerNspawn, "/proc/1/cgroup names a machine scope")
	}
	if r := strings.ToLower(e.OSRelease); strings.Contains(r, "microsoft") || strings.Contains(r, "wsl") {
		add(ContainerWSL, "the kernel release names Microsoft (WSL)")
	}
	if len(kinds) > 0 {
		c.Kind = kinds[0]
	}
	return c
}

// containerKind maps a container= value to a kind.
func containerKind(v string) string {
	switch v {
	case "docker":
		return ContainerDocker
	case "podman", "oci":
		return ContainerPodman
	case "lxc", "lxc-libvirt":
		return ContainerLXC
	case "systemd-nspawn":
		return ContainerNspawn
	case "wsl":
		return ContainerWSL
	}
	return ContainerOther
}

// anonFolios decides Host.AnonFolios from the transparent huge page
// settings: top is the content of transparent_hugepage/enabled, sizes
// that of each hugepages-SIZE/enabled, by SIZE ("64kB"). In each, the
// setting in force is the word in brackets.
func anonFolios(top string, sizes map[string]string) []string {
	out := []string{}
	for size, v := range sizes {
		switch chosen(v) {
		case "always":
		case "inherit":
			if chosen(top) != "always" {
				continue
			}
		default:
			continue
		}
		out = append(out, size)
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(kilobytes(a), kilobytes(b)) })
	return out
}

// chosen returns the bracketed word of a sysfs choice ("always [madvise]
// never"), "" when there is none.
func chosen(v string) string {
	_, rest, ok := strings.Cut(v, "[")
	word, _, closed := strings.Cut(rest, "]")
	if !ok || !closed {
		return ""
	}
	return word
}

// kilobytes reads a size such as "64kB"; 0 when it is not one.
func kilobytes(size string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(size, "kB"))
	if err != nil {
		return 0
	}
	return n
}
