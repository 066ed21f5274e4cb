//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// doctorFeature is one feature of `cordon doctor --json` (docs/doctor.md).
type doctorFeature struct {
	Available bool   `json:"available"`
	Step      string `json:"step"`
	Errno     string `json:"errno"`
	Error     string `json:"error"`
	Cause     string `json:"cause"`
}

func (f doctorFeature) String() string {
	if f.Available {
		return "available"
	}
	return fmt.Sprintf("missing (%s: %s %s, cause %s)", f.Step, f.Errno, f.Error, f.Cause)
}

// doctorReport is the part of `cordon doctor --json` the test checks,
// decoded independently of the probe package.
type doctorReport struct {
	EUID             int           `json:"euid"`
	Kernel           string        `json:"kernel"`
	BootID           string        `json:"bootId"`
	Cached           bool          `json:"cached"`
	ProbeMillis      float64       `json:"probeMillis"`
	UserNamespaces   doctorFeature `json:"userNamespaces"`
	MountNamespace   doctorFeature `json:"mountNamespace"`
	PIDNamespace     doctorFeature `json:"pidNamespace"`
	IPCNamespace     doctorFeature `json:"ipcNamespace"`
	UTSNamespace     doctorFeature `json:"utsNamespace"`
	NetworkNamespace doctorFeature `json:"networkNamespace"`
	CgroupNamespace  doctorFeature `json:"cgroupNamespace"`
	Procfs           doctorFeature `json:"procfs"`
	Overlayfs        doctorFeature `json:"overlayfs"`
	Pidfd            doctorFeature `json:"pidfd"`
	Seccomp          struct {
		doctorFeature
		Actions    []string `json:"actions"`
		UserNotify bool     `json:"userNotify"`
	} `json:"seccomp"`
	Landlock struct {
		doctorFeature
		ABI int `json:"abi"`
	} `json:"landlock"`
	Cgroups struct {
		Layout        string        `json:"layout"`
		V1Controllers []string      `json:"v1Controllers"`
		V2Mount       string        `json:"v2Mount"`
		Own           string        `json:"own"`
		Parents       []string      `json:"parents"`
		Create        doctorFeature `json:"create"`
		Controllers   []string      `json:"controllers"`
	} `json:"cgroups"`
	Verdict  string   `json:"verdict"`
	Lost     []string `json:"lost"`
	Problems []struct {
		Features []string `json:"features"`
		Cause    string   `json:"cause"`
		Fixes    []struct {
			On      string `json:"on"`
			Command string `json:"command"`
			Note    string `json:"note"`
		} `json:"fixes"`
	} `json:"problems"`
}

// TestDoctor runs `cordon doctor --json --fresh` as root and as the
// unprivileged user and checks every answer against an independent check
// made as the same caller: util-linux's unshare for the namespaces,
// /proc/sys/kernel/seccomp/actions_avail for seccomp, the landlock system
// call and /sys/kernel/security/lsm for Landlock, /proc/self/mountinfo and
// /proc/cgroups for the cgroup layout, mkdir for cgroup creation. A
// feature that is missing here is not a skip: the test compares, whatever
// the answer.
func TestDoctor(t *testing.T) {
	for _, name := range []string{"root", "user"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := callers[name]
			requires(t, func() string { return c.missing }, needTool("unshare"), needTool("mount"), needTool("hostname"))
			b := newBox(t, c)
			cacheEnv := "XDG_CACHE_HOME=" + filepath.Join(b.dir, "cache")

			start := time.Now()
			res := b.cordon(runSpec{env: []string{cacheEnv}}, "doctor", "--json", "--fresh")
			cold := time.Since(start)
			rep := decodeDoctor(t, res)
			t.Logf("cold: probeMillis %.1f, the whole command %v; verdict %s", rep.ProbeMillis, cold.Round(time.Millisecond), rep.Verdict)
			if rep.Cached {
				t.Error("--fresh answered from the cache")
			}
			wantCode := 0
			if rep.Verdict == "unavailable" {
				wantCode = 1
			}
			if res.code != wantCode {
				t.Errorf("exit status %d with verdict %s, want %d", res.code, rep.Verdict, wantCode)
			}

			t.Run("caller", func(t *testing.T) {
				if rep.EUID != c.uid {
					t.Errorf("euid %d, want %d", rep.EUID, c.uid)
				}
				var u unix.Utsname
				must(t, unix.Uname(&u))
				if want := unix.ByteSliceToString(u.Release[:]); rep.Kernel != want {
					t.Errorf("kernel %q, want %q", rep.Kernel, want)
				}
				if want := strings.TrimSpace(readFile("/proc/sys/kernel/random/boot_id")); rep.BootID != want {
					t.Errorf("bootId %q, want %q", rep.BootID, want)
				}
			})
			t.Run("namespaces", func(t *testing.T) { checkNamespaces(t, c, rep) })
			t.Run("seccomp", func(t *testing.T) { checkSeccomp(t, rep) })
			t.Run("landlock", func(t *testing.T) { checkLandlock(t, rep) })
			t.Run("cgroups", func(t *testing.T) { checkCgroups(t, c, rep) })
			t.Run("pidfd", func(t *testing.T) {
				fd, err := unix.PidfdOpen(os.Getpid(), 0)
				if err == nil {
					unix.Close(fd)
				}
				if rep.Pidfd.Available != (err == nil) {
					t.Errorf("pidfd: cordon says %v; pidfd_open here: %v", rep.Pidfd, err)
				}
			})
			t.Run("verdict", func(t *testing.T) { checkVerdict(t, rep) })
			t.Run("cache", func(t *testing.T) { checkDoctorCache(t, b, cacheEnv, rep) })
			t.Run("text", func(t *testing.T) {
				r := b.cordon(runSpec{env: []string{cacheEnv}}, "doctor")
				if r.code != wantCode || !strings.Contains(r.stdout, "\nverdict: ") {
					t.Fatalf("cordon doctor:\n%s", r)
				}
				for _, line := range []string{"user namespaces", "fresh /proc", "seccomp filter", "Landlock", "cgroups"} {
					if !regexpLine(r.stdout, `^(ok|missing|degraded)\s+`+line) {
						t.Errorf("no status line for %s:\n%s", line, r.stdout)
					}
				}
			})
		})
	}
}

func decodeDoctor(t *testing.T, res result) doctorReport {
	t.Helper()
	var rep doctorReport
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("cordon doctor --json: %v\n%s", err, res)
	}
	return rep
}

func regexpLine(text, pattern string) bool {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if ok, _ := regexp.MatchString(pattern, sc.Text()); ok {
			return true
		}
	}
	return false
}

// asCaller runs a command as the caller, outside any sandbox, and returns
// its error with its output.
func asCaller(c *caller, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = []string{"PATH=" + sandboxPath, "LC_ALL=C"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// checkNamespaces compares each namespace with util-linux's unshare, run
// as the same caller with the same mapping (uid 0 inside is the caller).
func checkNamespaces(t *testing.T, c *caller, rep doctorReport) {
	overlay := "mount -t tmpfs t /tmp && mkdir /tmp/l /tmp/u /tmp/w /tmp/m && " +
		"mount -t overlay o -o lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w /tmp/m && touch /tmp/m/f"
	tests := []struct {
		name string
		got  doctorFeature
		args []string
	}{
		{"userNamespaces", rep.UserNamespaces, []string{"--user", "--map-root-user", "--uts", "hostname", "cordon-it"}},
		{"mountNamespace", rep.MountNamespace, []string{"--user", "--map-root-user", "--mount", "mount", "-t", "tmpfs", "t", "/tmp"}},
		{"pidNamespace", rep.PIDNamespace, []string{"--user", "--map-root-user", "--pid", "--fork", "sh", "-c", `test $$ = 1`}},
		{"procfs", rep.Procfs, []string{"--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc", "true"}},
		{"networkNamespace", rep.NetworkNamespace, []string{"--user", "--map-root-user", "--net", "true"}},
		{"ipcNamespace", rep.IPCNamespace, []string{"--user", "--map-root-user", "--ipc", "true"}},
		{"utsNamespace", rep.UTSNamespace, []string{"--user", "--map-root-user", "--uts", "hostname", "cordon-it"}},
		{"cgroupNamespace", rep.CgroupNamespace, []string{"--user", "--map-root-user", "--cgroup", "true"}},
		{"overlayfs", rep.Overlayfs, []string{"--user", "--map-root-user", "--mount", "sh", "-c", overlay}},
	}
	for _, tc := range tests {
		err := asCaller(c, "unshare", tc.args...)
		if tc.got.Available != (err == nil) {
			t.Errorf("%s: cordon says %v; unshare says %v", tc.name, tc.got, err)
		}
		if !tc.got.Available && tc.got.Cause == "" {
			t.Errorf("%s: missing without a cause", tc.name)
		}
	}
	// mount_setattr, behind cordon's recursive read-only binds, is Linux
	// 5.12.
	if rep.MountNamespace.Available && !kernelAtLeast(5, 12) {
		t.Errorf("mountNamespace available on a kernel without mount_setattr")
	}
}

func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return true
	}
	var ma, mi int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi)
	return ma > major || ma == major && mi >= minor
}

// checkSeccomp compares with the kernel's own list of actions.
func checkSeccomp(t *testing.T, rep doctorReport) {
	names := map[string]string{
		"kill_process": "SCMP_ACT_KILL_PROCESS", "kill_thread": "SCMP_ACT_KILL_THREAD",
		"trap": "SCMP_ACT_TRAP", "errno": "SCMP_ACT_ERRNO", "user_notif": "SCMP_ACT_NOTIFY",
		"trace": "SCMP_ACT_TRACE", "log": "SCMP_ACT_LOG", "allow": "SCMP_ACT_ALLOW",
	}
	avail, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	if err != nil {
		if rep.Seccomp.Available {
			t.Errorf("seccomp available, but the kernel has no actions_avail: %v", err)
		}
		return
	}
	if !rep.Seccomp.Available {
		t.Errorf("seccomp: cordon says %v; the kernel lists %s", rep.Seccomp.doctorFeature, bytes.TrimSpace(avail))
	}
	var want []string
	for _, a := range strings.Fields(string(avail)) {
		want = append(want, names[a])
	}
	got := slices.Clone(rep.Seccomp.Actions)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("seccomp actions %v, the kernel lists %v", got, want)
	}
	if rep.Seccomp.UserNotify != slices.Contains(want, "SCMP_ACT_NOTIFY") {
		t.Errorf("seccomp userNotify %v, the kernel's actions %v", rep.Seccomp.UserNotify, want)
	}
}

// checkLandlock asks the kernel for the ABI directly, and the list of
// security modules when securityfs is mounted.
func checkLandlock(t *testing.T, rep doctorReport) {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	want := 0
	if errno == 0 {
		want = int(abi)
	}
	if rep.Landlock.ABI != want || rep.Landlock.Available != (want > 0) {
		t.Errorf("landlock: cordon says ABI %d, %v; the kernel says %d (%v)", rep.Landlock.ABI, rep.Landlock.doctorFeature, want, errno)
	}
	if lsm, err := os.ReadFile("/sys/kernel/security/lsm"); err == nil {
		listed := slices.Contains(strings.Split(strings.TrimSpace(string(lsm)), ","), "landlock")
		if listed != rep.Landlock.Available {
			t.Errorf("landlock available %v; /sys/kernel/security/lsm: %s", rep.Landlock.Available, lsm)
		}
	} else {
		t.Logf("no /sys/kernel/security/lsm (%v): the system call alone decides", err)
	}
}

// checkCgroups reads the layout from mountinfo and /proc/cgroups, and
// tries as the caller to create a cgroup where cordon says sandboxes go.
func checkCgroups(t *testing.T, c *caller, rep doctorReport) {
	var v1, v2 []string // mount points
	v1Ctrls := map[string]bool{}
	for _, line := range strings.Split(readFile("/proc/self/mountinfo"), "\n") {
		before, after, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(before), strings.Fields(after)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		switch g[0] {
		case "cgroup2":
			v2 = append(v2, f[4])
		case "cgroup":
			v1 = append(v1, f[4])
		}
	}
	for _, line := range strings.Split(readFile("/proc/cgroups"), "\n")[1:] {
		f := strings.Fields(line)
		// name hierarchy num_cgroups enabled: hierarchy 0 is cgroup v2 or
		// unmounted.
		if len(f) == 4 && f[1] != "0" && f[3] == "1" {
			v1Ctrls[f[0]] = true
		}
	}
	want := "none"
	switch {
	case len(v1Ctrls) > 0 && len(v2) > 0:
		want = "hybrid"
	case len(v1Ctrls) > 0 || len(v1) > 0:
		want = "v1"
	case len(v2) > 0:
		want = "v2"
	}
	if rep.Cgroups.Layout != want {
		t.Errorf("cgroups layout %q, want %q (v1 mounts %v, v2 mounts %v)", rep.Cgroups.Layout, want, v1, v2)
	}
	var got []string
	for _, ctrl := range rep.Cgroups.V1Controllers {
		if !strings.HasPrefix(ctrl, "name=") {
			got = append(got, ctrl)
		}
	}
	var wantCtrls []string
	for ctrl := range v1Ctrls {
		wantCtrls = append(wantCtrls, ctrl)
	}
	slices.Sort(wantCtrls)
	if !slices.Equal(got, wantCtrls) {
		t.Errorf("v1 controllers %v, /proc/cgroups has %v", got, wantCtrls)
	}

	// Where sandboxes go: /cordon in every hierarchy for root, the
	// caller's own v2 cgroup otherwise (cordon runs in the test's cgroup).
	var parents []string
	if c.uid == 0 {
		for _, p := range v1 {
			parents = append(parents, filepath.Join(p, "cordon"))
		}
		for _, p := range v2 {
			parents = append(parents, filepath.Join(p, "cordon"))
		}
	} else if len(v2) == 1 {
		for _, line := range strings.Split(readFile("/proc/self/cgroup"), "\n") {
			if own, ok := strings.CutPrefix(line, "0::"); ok {
				parents = append(parents, filepath.Join(v2[0], own))
			}
		}
	}
	slices.Sort(parents)
	gotParents := slices.Clone(rep.Cgroups.Parents)
	slices.Sort(gotParents)
	if !slices.Equal(gotParents, parents) {
		t.Errorf("cgroup parents %v, want %v", gotParents, parents)
	}
	creatable := len(parents) > 0
	for _, p := range parents {
		dir := filepath.Join(p, "cordon-it-"+suiteToken)
		err := asCaller(c, "sh", "-c", fmt.Sprintf(`mkdir -p %q && mkdir %q && rmdir %q`, p, dir, dir))
		if err != nil {
			creatable = false
			t.Logf("as %s: %v", c.name, err)
		}
		// The probe leaves nothing behind.
		if left, _ := filepath.Glob(filepath.Join(p, "probe-*")); len(left) > 0 {
			t.Errorf("cgroups left by the probe: %v", left)
		}
	}
	if rep.Cgroups.Create.Available != creatable {
		t.Errorf("cgroups.create: cordon says %v; mkdir as %s says %v", rep.Cgroups.Create, c.name, creatable)
	}
}

// checkVerdict: unavailable exactly when a feature every sandbox needs is
// missing; full only when nothing that counts is lost.
func checkVerdict(t *testing.T, rep doctorReport) {
	required := rep.UserNamespaces.Available && rep.MountNamespace.Available && rep.PIDNamespace.Available &&
		rep.Procfs.Available && rep.NetworkNamespace.Available
	if (rep.Verdict == "unavailable") != !required {
		t.Errorf("verdict %s with the required features %v", rep.Verdict, required)
	}
	limits := rep.Cgroups.Create.Available
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		limits = limits && slices.Contains(rep.Cgroups.Controllers, ctrl)
	}
	everything := required && rep.IPCNamespace.Available && rep.UTSNamespace.Available &&
		rep.CgroupNamespace.Available && rep.Seccomp.Available && rep.Seccomp.UserNotify &&
		rep.Landlock.Available && limits
	if (rep.Verdict == "full") != everything {
		t.Errorf("verdict %s, lost %q", rep.Verdict, rep.Lost)
	}
	if rep.Verdict != "full" && (len(rep.Lost) == 0 || len(rep.Problems) == 0) {
		t.Errorf("verdict %s without lost protections or problems", rep.Verdict)
	}
	if !limits && !slices.ContainsFunc(rep.Lost, func(l string) bool { return strings.Contains(l, "cgroup limits") }) {
		t.Errorf("no cgroup limits, and lost does not say so: %q", rep.Lost)
	}
	for _, p := range rep.Problems {
		if p.Cause == "" || len(p.Features) == 0 {
			t.Errorf("problem without a cause or features: %+v", p)
		}
	}
}

// checkDoctorCache: the second call answers from the cache with the same
// facts; a corrupt cache is ignored and replaced.
func checkDoctorCache(t *testing.T, b *box, cacheEnv string, first doctorReport) {
	start := time.Now()
	res := b.cordon(runSpec{env: []string{cacheEnv}}, "doctor", "--json")
	t.Logf("cached: the whole command %v", time.Since(start).Round(time.Millisecond))
	second := decodeDoctor(t, res)
	if !second.Cached {
		t.Error("the second call probed again")
	}
	second.Cached = false
	if a, b := fmt.Sprintf("%+v", first), fmt.Sprintf("%+v", second); a != b {
		t.Errorf("cached answer differs:\nfirst  %s\nsecond %s", a, b)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimPrefix(cacheEnv, "XDG_CACHE_HOME="), "cordon", "probe-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one (one binary, one caller)", files)
	}
	file := files[0]
	var st unix.Stat_t
	must(t, unix.Stat(file, &st))
	if int(st.Uid) != b.c.uid || st.Mode&0o077 != 0 {
		t.Errorf("cache file owner %d mode %o, want %d and no access for others", st.Uid, st.Mode&0o777, b.c.uid)
	}
	// A cache that claims everything must not be believed when it does
	// not parse as cordon's.
	must(t, os.WriteFile(file, []byte(`{"key":{},"result":{"verdict":"full"}}`+"\n"), 0o600))
	must(t, os.Chown(file, b.c.uid, b.c.gid))
	third := decodeDoctor(t, b.cordon(runSpec{env: []string{cacheEnv}}, "doctor", "--json"))
	if third.Cached {
		t.Error("a corrupt cache was used")
	}
	fourth := decodeDoctor(t, b.cordon(runSpec{env: []string{cacheEnv}}, "doctor", "--json"))
	if !fourth.Cached {
		t.Error("the corrupt cache was not replaced")
	}
}

// TestNamespaceLimit: with user.max_net_namespaces=0 (set in a user
// namespace of the test's own, whose limits bind everything below it, so
// the host's sysctls stay as they are) the full sandbox cannot be made:
// cordon run confines the command in the container mode and says so, naming
// the sysctl; under failIfUnavailable it refuses with exit 125 and one line
// naming it. Raised again, the next run probes again and gets the full
// sandbox, though the probe cache was written meanwhile.
func TestNamespaceLimit(t *testing.T) {
	t.Parallel()
	requires(t, needTool("setpriv"))
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		cache := filepath.Join(b.dir, "cache")
		must(t, os.Mkdir(cache, 0o700))
		strict := filepath.Join(b.dir, "strict.json")
		must(t, os.WriteFile(strict, []byte(`{"sandbox": {"failIfUnavailable": true}}`), 0o644))
		b.chown()
		// A session of the test's own: the warnings are said once per
		// session, whatever other runs said this boot.
		session := fmt.Sprintf("limit-%s-%d", c.name, time.Now().UnixNano())
		run := "setpriv --inh-caps=-all --ambient-caps=-all " + cordonBin + " run --session "
		script := `L=/proc/sys/user/max_net_namespaces
echo 0 > $L || exit 90
` + run + session + `-a -- echo contained 2>&1; echo first=$?
` + run + session + `-b --settings ` + strict + ` -- echo strict 2>&1; echo strict=$?
echo 1000 > $L || exit 91
` + run + session + `-c -- echo ran 2>&1; echo second=$?`
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = b.ws
		cmd.Env = b.env("XDG_CACHE_HOME=" + cache)
		attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, AmbientCaps: []uintptr{unix.CAP_SYS_RESOURCE}, Pdeathsig: syscall.SIGKILL}
		if c.cred == nil {
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}}
			attr.GidMappingsEnableSetgroups = true
		} else {
			attr.Credential = &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.gid), NoSetGroups: true}
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: c.uid, HostID: c.uid, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: c.gid, HostID: c.gid, Size: 1}}
		}
		cmd.SysProcAttr = attr
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// Each run's output: its lines up to its status.
		runs := map[string][]string{}
		var cur []string
		for _, l := range lines(string(out)) {
			if name, st, ok := strings.Cut(l, "="); ok && (name == "first" || name == "strict" || name == "second") {
				runs[name+"="+st] = cur
				cur = nil
				continue
			}
			cur = append(cur, l)
		}
		said := func(ls []string, words ...string) bool {
			return slices.ContainsFunc(ls, func(l string) bool {
				for _, w := range words {
					if !strings.Contains(l, w) {
						return false
					}
				}
				return true
			})
		}
		if ls, ok := runs["first=0"]; !ok || !slices.Contains(ls, "contained") || !said(ls, "cordon: warning: container mode", "user.max_net_namespaces=0") {
			t.Errorf("max_net_namespaces=0: want the command run in the container mode, said with the sysctl named:\n%s", out)
		}
		if ls, ok := runs["strict=125"]; !ok || len(ls) != 1 || !said(ls, "user.max_net_namespaces=0") {
			t.Errorf("max_net_namespaces=0 under failIfUnavailable: want exit 125 and one line naming user.max_net_namespaces=0:\n%s", out)
		}
		if ls, ok := runs["second=0"]; !ok || !slices.Contains(ls, "ran") || said(ls, "container mode") {
			t.Errorf("max_net_namespaces raised again: want the full sandbox (the cache must not hold the old answer):\n%s", out)
		}
	})
}

// TestProbeCgroupsSwept: the cgroup a probe makes and removes stays when
// the cordon probing is killed meanwhile; the next probe removes those
// whose prober is gone, and leaves a live one's alone.
func TestProbeCgroupsSwept(t *testing.T) {
	t.Parallel()
	c := callers["root"]
	requires(t, needCaller(c))
	b := newBox(t, c)
	cacheEnv := "XDG_CACHE_HOME=" + filepath.Join(b.dir, "cache")
	rep := decodeDoctor(t, b.cordon(runSpec{env: []string{cacheEnv}}, "doctor", "--json", "--fresh"))
	if len(rep.Cgroups.Parents) == 0 {
		t.Fatalf("root's probe has no cgroup parents: %+v", rep.Cgroups)
	}
	gone := exec.Command("true")
	must(t, gone.Run())
	var dead, live []string
	for _, p := range rep.Cgroups.Parents {
		d := filepath.Join(p, fmt.Sprintf("probe-%d-0badcafe", gone.Process.Pid))
		l := filepath.Join(p, fmt.Sprintf("probe-%d-0badcafe", os.Getpid()))
		must(t, os.Mkdir(d, 0o755))
		must(t, os.Mkdir(l, 0o755))
		dead, live = append(dead, d), append(live, l)
		t.Cleanup(func() { _ = syscall.Rmdir(d); _ = syscall.Rmdir(l) })
	}
	decodeDoctor(t, b.cordon(runSpec{env: []string{cacheEnv}}, "doctor", "--json", "--fresh"))
	for _, d := range dead {
		if exists(d) {
			t.Errorf("%s, a killed prober's cgroup, is still there", d)
		}
	}
	for _, l := range live {
		if !exists(l) {
			t.Errorf("%s, a live prober's cgroup, was removed", l)
		}
	}
}

// TestProbeOutOfDescriptors: under RLIMIT_NOFILE=16 the probe cannot start
// its children (EMFILE): the run refuses with one line, and the next run,
// without the limit, is not refused from a cached answer.
func TestProbeOutOfDescriptors(t *testing.T) {
	t.Parallel()
	requires(t, needTool("prlimit"))
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		cache := "XDG_CACHE_HOME=" + filepath.Join(b.dir, "cache")
		r := b.runSpec(runSpec{env: []string{cache}, via: []string{toolPath("prlimit"), "--nofile=16", "--"}, args: []string{"true"}})
		if errs := errLines(r.stderr); r.code != 125 || len(errs) != 1 {
			t.Errorf("RLIMIT_NOFILE=16: want exit 125 and one line:\n%s", r)
		}
		if r := b.runSpec(runSpec{env: []string{cache}, args: []string{"echo", "ran"}}); r.code != 0 || r.stdout != "ran\n" {
			t.Errorf("the next run, without the limit, was refused:\n%s", r)
		}
	})
}
