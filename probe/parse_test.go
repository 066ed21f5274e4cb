package probe

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Mountinfo excerpts of typical systems.
const (
	// This machine: cgroup v1 controllers and cgroup2 at .../unified.
	mountinfoHybrid = `22 27 0:21 / /proc rw,relatime - proc proc rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	// A systemd host on cgroup v2 only, with binfmt_misc mounted.
	mountinfoV2 = `22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw
30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
48 22 0:40 / /proc/sys/fs/binfmt_misc rw,nosuid,nodev,noexec,relatime shared:26 - binfmt_misc binfmt_misc rw
`
	// CentOS 7: v1 only, cpu and cpuacct co-mounted.
	mountinfoV1 = `25 18 0:21 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:8 - tmpfs tmpfs ro,mode=755
26 25 0:22 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd
29 25 0:25 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,cpuacct,cpu
31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,memory
`
	// Docker's defaults on cgroup v2: the container's cgroup namespace,
	// a read-only cgroup2 mount, masked parts of /proc.
	mountinfoDocker = `600 540 0:50 / / rw,relatime master:1 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A,upperdir=/var/lib/docker/overlay2/x/diff,workdir=/var/lib/docker/overlay2/x/work
601 600 0:53 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
610 600 0:58 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate,memory_recursiveprot
541 601 0:53 /bus /proc/bus ro,nosuid,nodev,noexec,relatime - proc proc rw
542 601 0:53 /sys /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw
543 601 0:61 / /proc/acpi ro,relatime - tmpfs tmpfs ro
544 601 0:54 /null /proc/kcore rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
545 601 0:54 /null /proc/keys rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
`
	// Docker on cgroup v1 without a cgroup namespace: the hierarchy's
	// root is the container's cgroup. Also a mount point with a space.
	mountinfoDockerV1 = `700 600 0:70 /docker/0123abcd /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime master:15 - cgroup cgroup rw,memory
701 600 0:71 / /mnt/my\040dir rw,relatime - tmpfs tmpfs rw
`
)

func TestCgroupLayout(t *testing.T) {
	tests := []struct {
		name      string
		mountinfo string
		layout    string
		v1        []string
		v2        string
		masks     []string
	}{
		{"hybrid", mountinfoHybrid, LayoutHybrid, []string{"cpu", "cpuacct", "memory", "name=systemd", "pids"}, "/sys/fs/cgroup/unified", []string{}},
		{"v2", mountinfoV2, LayoutV2, []string{}, "/sys/fs/cgroup", []string{}},
		{"v1", mountinfoV1, LayoutV1, []string{"cpu", "cpuacct", "memory", "name=systemd"}, "", []string{}},
		{"docker", mountinfoDocker, LayoutV2, []string{}, "/sys/fs/cgroup",
			[]string{"/proc/acpi", "/proc/bus", "/proc/kcore", "/proc/keys", "/proc/sys"}},
		{"docker-v1", mountinfoDockerV1, LayoutV1, []string{"memory"}, "", []string{}},
		{"none", "22 1 0:21 / /proc rw - proc proc rw\n", LayoutNone, []string{}, "", []string{}},
		{"garbage", "not a mountinfo line\n\n1 2 3\n", LayoutNone, []string{}, "", []string{}},
		// Only a named v1 hierarchy next to cgroup2 is cgroup v2 for
		// controllers.
		{"named-only", "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
			LayoutV2, []string{"name=systemd"}, "/sys/fs/cgroup/unified", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms := parseMountinfo(tc.mountinfo)
			v1, v2 := cgroupMounts(ms)
			if got := cgroupLayout(v1, v2); got != tc.layout {
				t.Errorf("layout = %q, want %q", got, tc.layout)
			}
			if diff := cmp.Diff(tc.v1, v1Controllers(v1)); diff != "" {
				t.Errorf("v1 controllers (-want +got):\n%s", diff)
			}
			got := ""
			if v2 != nil {
				got = v2.Point
			}
			if got != tc.v2 {
				t.Errorf("v2 mount = %q, want %q", got, tc.v2)
			}
			if diff := cmp.Diff(tc.masks, procMasks(ms)); diff != "" {
				t.Errorf("proc masks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFavorDynmods(t *testing.T) {
	tests := []struct {
		name      string
		mountinfo string
		want      bool
	}{
		{"hybrid", mountinfoHybrid, false},
		{"v2", mountinfoV2, false},
		{"v2 favordynmods", "30 24 0:26 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw,nsdelegate,favordynmods,memory_recursiveprot\n", true},
		{"hybrid, on the unified mount", mountinfoHybrid + "42 31 0:39 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,favordynmods\n", true},
		{"v1 hierarchy", "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory,favordynmods\n", true},
		{"a mount option, not a super block one", "30 24 0:26 / /sys/fs/cgroup rw,favordynmods - cgroup2 cgroup2 rw\n", false},
		{"another file system", "31 23 0:28 / /mnt rw - tmpfs tmpfs rw,favordynmods\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := favorDynmods(parseMountinfo(tc.mountinfo)); got != tc.want {
				t.Errorf("favorDynmods = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseMountinfo(t *testing.T) {
	ms := parseMountinfo(mountinfoDockerV1)
	want := []mount{
		{Root: "/docker/0123abcd", Point: "/sys/fs/cgroup/memory", FSType: "cgroup", Source: "cgroup", Super: []string{"rw", "memory"}},
		{Root: "/", Point: "/mnt/my dir", FSType: "tmpfs", Source: "tmpfs", Super: []string{"rw"}},
	}
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestProcCgroup(t *testing.T) {
	hybrid := "9:name=systemd:/\n4:memory:/process_api/fb64\n1:cpu,cpuacct:/\n0::/\n"
	got := parseProcCgroup(hybrid)
	want := []procCgroup{
		{ID: 9, Controllers: []string{"name=systemd"}, Path: "/"},
		{ID: 4, Controllers: []string{"memory"}, Path: "/process_api/fb64"},
		{ID: 1, Controllers: []string{"cpu", "cpuacct"}, Path: "/"},
		{ID: 0, Path: "/"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	tests := []struct {
		name, data, own string
		ok              bool
	}{
		{"hybrid", hybrid, "/", true},
		{"v2", "0::/user.slice/user-1000.slice/session-2.scope\n", "/user.slice/user-1000.slice/session-2.scope", true},
		{"v1", "4:memory:/user.slice\n1:name=systemd:/user.slice\n", "", false},
		{"garbage", "x\n:\nz:y\n", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			own, ok := ownV2Cgroup(parseProcCgroup(tc.data))
			if own != tc.own || ok != tc.ok {
				t.Errorf("ownV2Cgroup = %q, %v; want %q, %v", own, ok, tc.own, tc.ok)
			}
		})
	}
}

func TestCgroupDir(t *testing.T) {
	tests := []struct {
		name  string
		m     mount
		path  string
		dir   string
		shows bool
	}{
		{"host", mount{Root: "/", Point: "/sys/fs/cgroup"}, "/user.slice/a.scope", "/sys/fs/cgroup/user.slice/a.scope", true},
		{"hybrid", mount{Root: "/", Point: "/sys/fs/cgroup/unified"}, "/", "/sys/fs/cgroup/unified", true},
		{"container root", mount{Root: "/docker/abc", Point: "/sys/fs/cgroup/memory"}, "/docker/abc", "/sys/fs/cgroup/memory", true},
		{"container child", mount{Root: "/docker/abc", Point: "/sys/fs/cgroup/memory"}, "/docker/abc/x", "/sys/fs/cgroup/memory/x", true},
		{"outside the mount", mount{Root: "/docker/abc", Point: "/sys/fs/cgroup/memory"}, "/docker/abcd", "", false},
		{"relative", mount{Root: "/", Point: "/sys/fs/cgroup"}, "x", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, ok := cgroupDir(tc.m, tc.path)
			if dir != tc.dir || ok != tc.shows {
				t.Errorf("cgroupDir = %q, %v; want %q, %v", dir, ok, tc.dir, tc.shows)
			}
		})
	}
}

func TestDetectContainer(t *testing.T) {
	tests := []struct {
		name     string
		e        containerEvidence
		kind     string
		evidence int
	}{
		{"host", containerEvidence{Pid1Cgroup: "0::/init.scope", OSRelease: "6.8.0-31-generic"}, "", 0},
		{"docker", containerEvidence{DockerEnv: true, Pid1Cgroup: "0::/"}, ContainerDocker, 1},
		{"docker v1", containerEvidence{Pid1Cgroup: "12:memory:/docker/0123abcd\n0::/"}, ContainerDocker, 1},
		{"podman", containerEvidence{HasContainerEnvFile: true, ContainerEnv: "engine=\"podman-4.9.3\"", SelfEnv: "podman"}, ContainerPodman, 2},
		{"podman cgroup", containerEvidence{Pid1Cgroup: "0::/machine.slice/libpod-0123.scope/container"}, ContainerPodman, 1},
		{"kubernetes on containerd", containerEvidence{KubernetesEnv: true, KubernetesSA: true, Pid1Cgroup: "0::/"}, ContainerKubernetes, 2},
		{"kubernetes on docker", containerEvidence{KubernetesEnv: true, DockerEnv: true}, ContainerKubernetes, 2},
		{"kubepods", containerEvidence{Pid1Cgroup: "0::/kubepods/burstable/pod1/abc"}, ContainerKubernetes, 1},
		{"lxc", containerEvidence{Pid1Environ: "lxc"}, ContainerLXC, 1},
		{"lxc cgroup", containerEvidence{Pid1Cgroup: "0::/lxc.payload.c1/init.scope"}, ContainerLXC, 1},
		{"nspawn", containerEvidence{SystemdContainer: "systemd-nspawn", Pid1Cgroup: "0::/machine.slice/machine-c1.scope/init.scope"}, ContainerNspawn, 2},
		{"wsl", containerEvidence{OSRelease: "5.15.153.1-microsoft-standard-WSL2"}, ContainerWSL, 1},
		{"docker in wsl", containerEvidence{DockerEnv: true, OSRelease: "5.15.153.1-microsoft-standard-WSL2"}, ContainerDocker, 2},
		{"unknown engine", containerEvidence{SystemdContainer: "zone"}, ContainerOther, 1},
		{"cordon in docker", containerEvidence{CordonSandbox: true, DockerEnv: true}, ContainerCordon, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := detectContainer(tc.e)
			if c.Kind != tc.kind || len(c.Evidence) != tc.evidence {
				t.Errorf("detectContainer = %q %q; want %q with %d pieces of evidence", c.Kind, c.Evidence, tc.kind, tc.evidence)
			}
		})
	}
}

func TestKernelAtLeast(t *testing.T) {
	tests := []struct {
		release      string
		major, minor int
		want         bool
	}{
		{"6.18.44-fc-v445", 5, 13, true},
		{"5.13.0", 5, 13, true},
		{"5.10.0-28-amd64", 5, 13, false},
		{"4.19.0", 5, 0, false},
		{"5.15.153.1-microsoft-standard-WSL2", 5, 11, true},
		{"", 5, 13, true},
		{"weird", 5, 13, true},
	}
	for _, tc := range tests {
		if got := kernelAtLeast(tc.release, tc.major, tc.minor); got != tc.want {
			t.Errorf("kernelAtLeast(%q, %d, %d) = %v, want %v", tc.release, tc.major, tc.minor, got, tc.want)
		}
	}
}

func FuzzParseMountinfo(f *testing.F) {
	for _, s := range []string{mountinfoHybrid, mountinfoV2, mountinfoV1, mountinfoDocker, mountinfoDockerV1, `1 2 3:4 /a\04 /b\ - x y z`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		ms := parseMountinfo(data)
		v1, v2 := cgroupMounts(ms)
		_ = cgroupLayout(v1, v2)
		_ = procMasks(ms)
		for _, m := range ms {
			_, _ = cgroupDir(m, "/x")
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	f.Add("9:name=systemd:/\n4:memory:/a\n0::/\n")
	f.Add("0::/user.slice/x:y\n")
	f.Fuzz(func(t *testing.T, data string) {
		_, _ = ownV2Cgroup(parseProcCgroup(data))
	})
}

func TestAnonFolios(t *testing.T) {
	const (
		always  = "[always] inherit madvise never"
		inherit = "always [inherit] madvise never"
		madvise = "always inherit [madvise] never"
		never   = "always inherit madvise [never]"
	)
	tests := []struct {
		name  string
		top   string
		sizes map[string]string
		want  []string
	}{
		{"the default", "always [madvise] never", map[string]string{"64kB": never, "2048kB": inherit}, []string{}},
		{"64 kB always", "always [madvise] never", map[string]string{"64kB": always, "16kB": never, "2048kB": inherit}, []string{"64kB"}},
		{"inherit under always", "[always] madvise never", map[string]string{"64kB": never, "2048kB": inherit}, []string{"2048kB"}},
		{"madvise is not any process's", "[always] madvise never", map[string]string{"64kB": madvise}, []string{}},
		{"smallest first", "[always] madvise never", map[string]string{"2048kB": inherit, "64kB": always, "16kB": always}, []string{"16kB", "64kB", "2048kB"}},
		{"no sizes (older kernels)", "[always] madvise never", nil, []string{}},
		{"unreadable", "", map[string]string{"64kB": ""}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := anonFolios(tt.top, tt.sizes); !slices.Equal(got, tt.want) || got == nil {
				t.Errorf("anonFolios = %#v, want %#v", got, tt.want)
			}
		})
	}
}
