package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// recorded loads a recorded probe result from testdata. The results of
// this machine were recorded by `cordon doctor --json --fresh` as root and
// as an unprivileged user; the others were written from the documented
// behaviour of those systems (see docs/doctor.md).
func recorded(t *testing.T, name string) Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// summary is what a verdict test compares: the level, the lost lines and
// each problem as "cause: features".
type summary struct {
	Level    string
	HostProc bool
	Lost     []string
	Problems []string
}

func summarize(v Verdict) summary {
	s := summary{Level: v.Level, HostProc: v.HostProc, Lost: v.Lost}
	for _, p := range v.Problems {
		s.Problems = append(s.Problems, fmt.Sprintf("%s %s: %s", p.Effect, p.Cause, strings.Join(p.Features, " ")))
	}
	return s
}

func TestAssessRecorded(t *testing.T) {
	tests := []struct {
		name string
		want summary
	}{
		{"this-machine-root", summary{Level: Full, Lost: []string{}}},
		{"this-machine-user", summary{
			Level:    Degraded,
			Lost:     []string{"no cgroup limits: the controllers are in cgroup v1 hierarchies, which are never delegated to an unprivileged user"},
			Problems: []string{"degraded cgroup-v1-rootless: cgroups.create"},
		}},
		{"ubuntu-24.04-apparmor", summary{
			Level: ContainerMode,
			Lost:  containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{
				"unavailable apparmor-restrict-unprivileged-userns: userNamespaces mountNamespace procfs networkNamespace utsNamespace",
				"degraded cgroup-not-delegated: cgroups.create",
			},
		}},
		{"docker-default", summary{
			Level: ContainerMode,
			Lost:  containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{
				"unavailable outer-seccomp: userNamespaces mountNamespace pidNamespace procfs networkNamespace ipcNamespace utsNamespace cgroupNamespace",
				"degraded cgroup-read-only: cgroups.create",
			},
		}},
		{"cgroupv2-systemd-delegated", summary{Level: Full, Lost: []string{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := recorded(t, tc.name)
			if diff := cmp.Diff(tc.want, summarize(Assess(r))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestReportGolden renders the doctor report of each recorded system, as
// text and as JSON.
func TestReportGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatal("no recorded results", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			rep := NewReport(recorded(t, name))
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".golden", text.Bytes())
			js, err := json.MarshalIndent(rep.Verdict, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".verdict.golden", append(js, '\n'))
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// TestAssessCases changes one fact of a system that has everything (cgroup
// v2 with a delegated subtree) and checks what the verdict makes of it.
// guardLost is what a run loses without the system-call guard.
const guardLost = "no system-call guard: the names the policy protects or denies are only protected where they exist when a run starts, and moved aside after it where it makes them"

func TestAssessCases(t *testing.T) {
	eperm := Feature{Step: "clone", Errno: "EPERM", Error: "operation not permitted"}
	allNamespaces := func(r *Result, f Feature) {
		for _, p := range []*Feature{&r.UserNamespaces, &r.MountNamespace, &r.PIDNamespace, &r.IPCNamespace,
			&r.UTSNamespace, &r.NetworkNamespace, &r.CgroupNamespace, &r.Procfs, &r.Overlayfs} {
			*p = f
		}
	}
	tests := []struct {
		name   string
		change func(r *Result)
		want   summary
		// fix is a substring of the first fix's command or note.
		fix string
	}{
		{"landlock not enabled", func(r *Result) {
			r.Landlock = Landlock{Feature: Feature{Step: "landlock_create_ruleset", Errno: "EOPNOTSUPP"}}
			r.Host.LSMs = []string{"lockdown", "capability", "yama", "selinux", "bpf"}
		}, summary{Level: Degraded,
			Lost:     []string{"no Landlock: no second, inode-based file-system layer"},
			Problems: []string{"degraded landlock-not-enabled: landlock"}},
			"lsm=landlock,lockdown,yama,selinux,bpf"},
		{"landlock on an old kernel", func(r *Result) {
			r.Kernel = "5.10.0-28-amd64"
			r.Host.LSMs = nil
			r.Landlock = Landlock{Feature: Feature{Step: "landlock_create_ruleset", Errno: "ENOSYS"}}
		}, summary{Level: Degraded,
			Lost:     []string{"no Landlock: no second, inode-based file-system layer", guardLost},
			Problems: []string{"degraded kernel-too-old: landlock seccomp.guard"}},
			"Linux 5.13"},
		{"landlock blocked by an outer filter", func(r *Result) {
			r.Host.SeccompFilters = 1
			r.Landlock = Landlock{Feature: Feature{Step: "landlock_create_ruleset", Errno: "ENOSYS"}}
		}, summary{Level: Degraded,
			Lost:     []string{"no Landlock: no second, inode-based file-system layer"},
			Problems: []string{"degraded outer-seccomp: landlock"}},
			"docker run --security-opt seccomp=unconfined"},
		{"debian unprivileged_userns_clone=0", func(r *Result) {
			r.Host.Sysctls[SysctlUnprivUserns] = "0"
			allNamespaces(r, eperm)
		}, summary{Level: ContainerMode,
			Lost: containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable unprivileged-userns-clone-disabled: userNamespaces mountNamespace pidNamespace " +
				"procfs networkNamespace ipcNamespace utsNamespace cgroupNamespace"}},
			"kernel.unprivileged_userns_clone=1"},
		{"max_user_namespaces=0", func(r *Result) {
			r.Host.Sysctls[SysctlMaxUserNS] = "0"
			allNamespaces(r, Feature{Step: "clone", Errno: "ENOSPC"})
		}, summary{Level: ContainerMode,
			Lost: containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable max-user-namespaces-zero: userNamespaces mountNamespace pidNamespace " +
				"procfs networkNamespace ipcNamespace utsNamespace cgroupNamespace"}},
			"user.max_user_namespaces=15000"},
		{"user namespace limit reached", func(r *Result) {
			r.UserNamespaces = Feature{Step: "clone", Errno: "ENOSPC"}
		}, summary{Level: ContainerMode,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable user-namespace-limit: userNamespaces"}},
			"user.max_user_namespaces="},
		{"max_net_namespaces=0", func(r *Result) {
			r.Host.Sysctls["user.max_net_namespaces"] = "0"
			r.NetworkNamespace = Feature{Step: "clone", Errno: "ENOSPC"}
		}, summary{Level: ContainerMode,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable namespace-limit: networkNamespace"}},
			"user.max_net_namespaces=15000"},
		{"max_mnt_namespaces=0", func(r *Result) {
			r.Host.Sysctls["user.max_mnt_namespaces"] = "0"
			r.MountNamespace = Feature{Step: "clone", Errno: "ENOSPC"}
			r.Procfs = Feature{Step: "clone", Errno: "ENOSPC"}
		}, summary{Level: ContainerMode,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable namespace-limit: mountNamespace procfs"}},
			"user.max_mnt_namespaces=15000"},
		{"max_ipc_namespaces=0", func(r *Result) {
			r.Host.Sysctls["user.max_ipc_namespaces"] = "0"
			r.IPCNamespace = Feature{Step: "clone", Errno: "ENOSPC"}
		}, summary{Level: Degraded,
			Lost:     []string{"no IPC namespace: System V IPC and POSIX message queues are shared with the host"},
			Problems: []string{"degraded namespace-limit: ipcNamespace"}},
			"user.max_ipc_namespaces=15000"},
		{"max_uts_namespaces=0 fails the user namespace probe", func(r *Result) {
			r.Host.Sysctls["user.max_uts_namespaces"] = "0"
			r.UserNamespaces = Feature{Step: "unshare", Errno: "ENOSPC"}
			r.UTSNamespace = Feature{Step: "clone", Errno: "ENOSPC"}
		}, summary{Level: ContainerMode,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable namespace-limit: userNamespaces utsNamespace"}},
			"user.max_uts_namespaces=15000"},
		{"kernel without user namespaces", func(r *Result) {
			allNamespaces(r, Feature{Step: "clone", Errno: "EINVAL"})
		}, summary{Level: ContainerMode,
			Lost: containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable kernel-config: userNamespaces mountNamespace pidNamespace " +
				"procfs networkNamespace ipcNamespace utsNamespace cgroupNamespace"}},
			"CONFIG_USER_NS"},
		{"procfs masked by podman", func(r *Result) {
			r.Container = Container{Kind: ContainerPodman, Evidence: []string{"/run/.containerenv exists"}}
			r.Host.ProcMasked = []string{"/proc/acpi", "/proc/kcore"}
			r.Procfs = Feature{Step: "mount proc", Errno: "EPERM"}
		}, summary{Level: ContainerMode, HostProc: true,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable proc-masked: procfs"}},
			"podman run --security-opt unmask=ALL"},
		{"mounts refused by an AppArmor profile", func(r *Result) {
			r.Container = Container{Kind: ContainerKubernetes, Evidence: []string{"KUBERNETES_SERVICE_HOST is set"}}
			r.Host.AppArmor = "cri-containerd.apparmor.d (enforce)"
			r.MountNamespace = Feature{Step: "make / private", Errno: "EACCES"}
		}, summary{Level: ContainerMode,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable outer-apparmor: mountNamespace"}},
			"appArmorProfile: {type: Unconfined}"},
		{"no mount_setattr", func(r *Result) {
			r.Kernel = "5.10.0"
			r.MountNamespace = Feature{Step: "mount_setattr", Errno: "ENOSYS"}
		}, summary{Level: ContainerMode,
			Lost:     append(containerLost(Result{Landlock: Landlock{ABI: 4}}), guardLost),
			Problems: []string{"unavailable kernel-too-old: mountNamespace seccomp.guard"}},
			"mount_setattr"},
		{"user notification taken", func(r *Result) {
			r.Seccomp.UserNotify = false
			r.Seccomp.UserNotifyFailure = &Feature{Step: "seccomp new listener", Errno: "EBUSY"}
		}, summary{Level: Degraded,
			Lost:     []string{"no seccomp user notification: refused system calls cannot be reported", guardLost},
			Problems: []string{"degraded seccomp-listener-exists: seccomp.userNotify seccomp.guard"}},
			""},
		{"inside another cordon sandbox: no container mode under its guard", func(r *Result) {
			r.Host.SeccompFilters = 2
			allNamespaces(r, eperm)
			r.Seccomp.UserNotify = false
			r.Seccomp.UserNotifyFailure = &Feature{Step: "seccomp new listener", Errno: "EBUSY"}
		}, summary{Level: Unavailable,
			Lost: []string{"no sandbox: cordon builds every sandbox in a user namespace", "no seccomp user notification: refused system calls cannot be reported", guardLost,
				"no container mode: an outer sandbox's seccomp supervisor performs file calls itself, where Landlock rules added below it do not apply"},
			Problems: []string{"unavailable outer-seccomp: userNamespaces mountNamespace pidNamespace procfs networkNamespace ipcNamespace utsNamespace cgroupNamespace",
				"degraded seccomp-listener-exists: seccomp.userNotify seccomp.guard"}},
			""},
		{"kernel before 5.19: no system-call guard", func(r *Result) {
			r.Kernel = "5.15.0-91-generic"
		}, summary{Level: Degraded,
			Lost:     []string{guardLost},
			Problems: []string{"degraded kernel-too-old: seccomp.guard"}},
			"Linux 5.19"},
		{"no seccomp", func(r *Result) {
			r.Seccomp = Seccomp{Feature: Feature{Step: "seccomp", Errno: "EINVAL"}, Actions: []string{}, Flags: []string{}}
		}, summary{Level: Degraded,
			Lost: []string{"no seccomp filter: system calls are not restricted (sockets to host daemons, io_uring, ptrace, ...)",
				"no seccomp user notification: refused system calls cannot be reported", guardLost},
			Problems: []string{"degraded kernel-config: seccomp seccomp.userNotify seccomp.guard"}},
			"CONFIG_SECCOMP_FILTER"},
		{"built without libseccomp", func(r *Result) {
			r.Libseccomp = Libseccomp{}
		}, summary{Level: Degraded,
			Lost:     []string{"no seccomp filter: cordon was built without libseccomp"},
			Problems: []string{"degraded no-libseccomp: libseccomp"}},
			"libseccomp-dev"},
		{"session scope not delegated", func(r *Result) {
			r.Cgroups.Own = "/user.slice/user-1000.slice/session-3.scope"
			r.Cgroups.Create = Feature{Step: "create /sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/probe-*", Errno: "EACCES"}
			r.Cgroups.Controllers = []string{}
		}, summary{Level: Degraded,
			Lost:     []string{"no cgroup limits: the caller's cgroup (/user.slice/user-1000.slice/session-3.scope) is not delegated to it, so it cannot create cgroups for its sandboxes"},
			Problems: []string{"degraded cgroup-not-delegated: cgroups.create"}},
			"systemd-run --user --scope -p Delegate=yes"},
		{"not delegated without systemd", func(r *Result) {
			r.Host.Systemd = false
			r.Cgroups.Create = Feature{Step: "create /sys/fs/cgroup/probe-*", Errno: "EACCES"}
		}, summary{Level: Degraded,
			Lost:     []string{"no cgroup limits: the caller's cgroup (/user.slice/user-1000.slice/user@1000.service/app.slice/run-r3c9f2b.scope) is not delegated to it, so it cannot create cgroups for its sandboxes"},
			Problems: []string{"degraded cgroup-not-delegated: cgroups.create"}},
			`sudo chown -R "$USER" /sys/fs/cgroup/cordon-$USER`},
		{"controllers not delegated", func(r *Result) {
			r.Cgroups.Controllers = []string{"memory", "pids"}
		}, summary{Level: Degraded,
			Lost:     []string{"no cgroup limits on cpu: the controllers are not available"},
			Problems: []string{"degraded cgroup-controllers-missing: cgroups.controllers"}},
			"Delegate=cpu cpuset io memory pids"},
		{"ubuntu restriction for an ordinary user", func(r *Result) {
			r.Host.Sysctls[SysctlAppArmorRestrict] = "1"
			r.UserNamespaces = Feature{Step: "sethostname", Errno: "EPERM"}
			r.Executable = "/home/me/go/bin/cordon"
		}, summary{Level: ContainerMode,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable apparmor-restrict-unprivileged-userns: userNamespaces"}},
			`profile cordon /home/me/go/bin/cordon flags=(unconfined) {\n  userns,`},
		{"root ignores the unprivileged sysctls", func(r *Result) {
			r.EUID = 0
			r.Host.Sysctls[SysctlAppArmorRestrict] = "1"
			r.Host.Sysctls[SysctlUnprivUserns] = "0"
			r.UserNamespaces = Feature{Step: "sethostname", Errno: "EPERM"}
		}, summary{Level: ContainerMode,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable unknown: userNamespaces"}},
			""},
		{"a probe out of time", func(r *Result) {
			r.NetworkNamespace = Feature{Step: "probe child net", Error: "no answer within the time limit", Cause: CauseTimeout}
		}, summary{Level: ContainerMode,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable probe-timeout: networkNamespace"}},
			"cordon doctor --fresh"},
		{"no user namespaces and no Landlock: nothing", func(r *Result) {
			r.UserNamespaces = Feature{Step: "clone", Errno: "EPERM"}
			r.Landlock = Landlock{Feature: Feature{Step: "landlock_create_ruleset", Errno: "EOPNOTSUPP", Cause: CauseLandlockNotEnabled}}
		}, summary{Level: Unavailable,
			Lost:     []string{"no sandbox: cordon builds every sandbox in a user namespace", "no Landlock: no second, inode-based file-system layer"},
			Problems: []string{"unavailable unknown: userNamespaces", "degraded landlock-not-enabled: landlock"}},
			""},
		{"a masked /proc alone: the host's /proc would do", func(r *Result) {
			r.Procfs = Feature{Step: "mount proc", Errno: "EPERM", Cause: CauseProcMasked}
			r.Host.ProcMasked = []string{"/proc/kcore"}
		}, summary{Level: ContainerMode, HostProc: true,
			Lost:     containerLost(Result{Landlock: Landlock{ABI: 4}}),
			Problems: []string{"unavailable proc-masked: procfs"}},
			""},
		{"informational features do not count", func(r *Result) {
			r.Overlayfs = Feature{Step: "mount overlay", Errno: "EINVAL"}
			r.Pidfd = Feature{Step: "pidfd_open", Errno: "ENOSYS"}
			r.Clone3IntoCgroup = Feature{Step: "clone3", Errno: "ENOSYS"}
		}, summary{Level: Full, Lost: []string{}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := recorded(t, "cgroupv2-systemd-delegated")
			tc.change(&r)
			v := Assess(r)
			if diff := cmp.Diff(tc.want, summarize(v)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.fix != "" {
				if len(v.Problems) == 0 || len(v.Problems[0].Fixes) == 0 {
					t.Fatalf("no fix; want one with %q", tc.fix)
				}
				f := v.Problems[0].Fixes[0]
				if !strings.Contains(f.Command+f.Note, tc.fix) {
					t.Errorf("first fix = %+v, want %q in it", f, tc.fix)
				}
			}
		})
	}
}

// TestAssessIsPure: Assess leaves its argument alone.
func TestAssessIsPure(t *testing.T) {
	r := recorded(t, "cgroupv2-systemd-delegated")
	r.Seccomp.UserNotify = false
	r.Seccomp.UserNotifyFailure = &Feature{Step: "seccomp new listener", Errno: "EBUSY"}
	r.Landlock = Landlock{Feature: Feature{Step: "landlock_create_ruleset", Errno: "EOPNOTSUPP"}}
	before, _ := json.Marshal(r)
	_ = Assess(r)
	_ = NewReport(r)
	after, _ := json.Marshal(r)
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("Assess changed its argument (-before +after):\n%s", diff)
	}
}

// TestDocumentedKeys: every key `cordon doctor --json` prints is in
// docs/doctor.md, as `path.to.key`, and every documented cause is a cause.
func TestDocumentedKeys(t *testing.T) {
	doc, err := os.ReadFile("../docs/doctor.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-zA-Z0-9_.=\\[\\]-]+)`").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	// A report with every optional key present.
	r := recorded(t, "this-machine-user")
	r.Seccomp.UserNotifyFailure = &Feature{Step: "s", Errno: "E", Error: "e", Cause: "c"}
	r.Host.Sysctls = map[string]string{}
	data, err := json.Marshal(NewReport(r))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				keys = append(keys, p)
				walk(p, sub)
			}
		case []any:
			for _, sub := range v {
				walk(prefix+"[]", sub)
			}
		}
	}
	walk("", v)
	sort.Strings(keys)
	featureFields := map[string]bool{"available": true, "step": true, "errno": true, "error": true, "cause": true}
	for _, k := range slices.Compact(keys) {
		parent, last := "", k
		if i := strings.LastIndexByte(k, '.'); i >= 0 {
			parent, last = k[:i], k[i+1:]
		}
		// A feature's fields are documented once for all features.
		if featureFields[last] && documented[parent] && documented[last] {
			continue
		}
		if !documented[k] {
			t.Errorf("key %s is not documented in docs/doctor.md", k)
		}
	}
	for _, c := range []string{CauseAppArmorUserns, CauseUnprivUsernsClone, CauseMaxUserNamespaces, CauseUserNSLimit,
		CauseNamespaceLimit, CauseOuterSeccomp, CauseOuterAppArmor, CauseProcMasked, CauseKernelConfig, CauseKernelTooOld,
		CauseLandlockNotEnabled, CauseNotDelegated, CauseCgroupV1Rootless, CauseCgroupReadOnly, CauseNoCgroupFS,
		CauseControllersMissing, CauseListenerExists, CauseNoLibseccomp, CauseTimeout, CauseUnknown} {
		if !documented[c] {
			t.Errorf("cause %s is not documented in docs/doctor.md", c)
		}
	}
}

func TestVerdictErr(t *testing.T) {
	if err := Assess(recorded(t, "this-machine-user")).Err(); err != nil {
		t.Errorf("degraded: Err() = %v, want nil", err)
	}
	if err := Assess(recorded(t, "docker-default")).Err(); err != nil {
		t.Errorf("container mode: Err() = %v, want nil", err)
	}
	// The same container on a kernel without Landlock: neither mode.
	r := recorded(t, "docker-default")
	r.Landlock = Landlock{Feature: Feature{Step: "landlock_create_ruleset", Errno: "ENOSYS", Error: "ENOSYS", Cause: CauseKernelConfig}}
	err := Assess(r).Err()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "userNamespaces") ||
		!strings.Contains(err.Error(), "seccomp filter of the docker container") ||
		!strings.Contains(err.Error(), "the container mode needs Landlock and seccomp: landlock: the kernel") {
		t.Errorf("unavailable: Err() = %v", err)
	}
	// The same container under a profile that refuses Landlock's calls
	// (an older Docker's): the refusal names the call it refuses, not
	// clone, which refused the namespaces.
	r.Landlock = Landlock{Feature: Feature{Step: "landlock_create_ruleset", Errno: "ENOSYS", Error: "ENOSYS"}}
	err = Assess(r).Err()
	want := "userNamespaces, mountNamespace, pidNamespace, procfs, networkNamespace, ipcNamespace, utsNamespace, cgroupNamespace: " +
		"the seccomp filter of the docker container cordon runs in refuses clone (EPERM); and the container mode needs Landlock and seccomp: " +
		"landlock: the seccomp filter of the docker container cordon runs in refuses landlock_create_ruleset (ENOSYS)"
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), want) {
		t.Errorf("unavailable under an outer filter without Landlock: Err() = %v, want it to hold %q", err, want)
	}
}
