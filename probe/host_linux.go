package probe

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// readTrim returns a file's content without surrounding space, "" when it
// cannot be read.
func readTrim(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func bootID() string { return readTrim("/proc/sys/kernel/random/boot_id") }

// sysctls reads the sysctls of SysctlNames that exist.
func sysctls() map[string]string {
	out := map[string]string{}
	for _, name := range SysctlNames {
		p := "/proc/sys/" + strings.ReplaceAll(name, ".", "/")
		if data, err := os.ReadFile(p); err == nil {
			out[name] = strings.TrimSpace(string(data))
		}
	}
	return out
}

// statusField returns a field of /proc/self/status.
func statusField(status, name string) string {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// appArmorLabel returns the caller's AppArmor label, "" without AppArmor.
func appArmorLabel() string {
	if l := readTrim("/proc/self/attr/apparmor/current"); l != "" {
		return l
	}
	// Kernels before 5.8 have only the shared attribute, which may be
	// SELinux's: trust it only when AppArmor is enabled.
	if readTrim("/sys/module/apparmor/parameters/enabled") == "Y" {
		return readTrim("/proc/self/attr/current")
	}
	return ""
}

// hostFacts collects the evidence failures are explained with.
func hostFacts(ms []mount) Host {
	status := readTrim("/proc/self/status")
	h := Host{
		Sysctls:    sysctls(),
		NoNewPrivs: statusField(status, "NoNewPrivs") == "1",
		AppArmor:   appArmorLabel(),
		Systemd:    isDir("/run/systemd/system"),
		ProcMasked: procMasks(ms),
	}
	h.SeccompFilters, _ = strconv.Atoi(statusField(status, "Seccomp_filters"))
	if h.SeccompFilters == 0 && statusField(status, "Seccomp") == "2" {
		// Kernels before 5.9 do not count the filters.
		h.SeccompFilters = 1
	}
	if lsm := readTrim("/sys/kernel/security/lsm"); lsm != "" {
		h.LSMs = strings.Split(lsm, ",")
	}
	h.AnonFolios = readAnonFolios()
	return h
}

// thpDir holds the kernel's transparent huge page settings.
const thpDir = "/sys/kernel/mm/transparent_hugepage"

// readAnonFolios reads the settings anonFolios decides from; nil when the
// kernel has none.
func readAnonFolios() []string {
	top := readTrim(filepath.Join(thpDir, "enabled"))
	if top == "" {
		return nil
	}
	dirs, _ := filepath.Glob(filepath.Join(thpDir, "hugepages-*kB"))
	sizes := map[string]string{}
	for _, d := range dirs {
		sizes[strings.TrimPrefix(filepath.Base(d), "hugepages-")] = readTrim(filepath.Join(d, "enabled"))
	}
	return anonFolios(top, sizes)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// container gathers the evidence of a container and decides.
func container() Container {
	e := containerEvidence{
		DockerEnv:           exists("/.dockerenv"),
		HasContainerEnvFile: exists("/run/.containerenv"),
		ContainerEnv:        readTrim("/run/.containerenv"),
		SystemdContainer:    readTrim("/run/systemd/container"),
		SelfEnv:             os.Getenv("container"),
		CordonSandbox:       os.Getenv("CORDON_SANDBOX") == "1",
		KubernetesEnv:       os.Getenv("KUBERNETES_SERVICE_HOST") != "",
		KubernetesSA:        exists("/var/run/secrets/kubernetes.io"),
		Pid1Cgroup:          readTrim("/proc/1/cgroup"),
		OSRelease:           readTrim("/proc/sys/kernel/osrelease"),
	}
	// PID 1's environment is readable only by its owner (and not always
	// by root).
	if data, err := os.ReadFile("/proc/1/environ"); err == nil {
		for _, kv := range strings.Split(string(data), "\x00") {
			if v, ok := strings.CutPrefix(kv, "container="); ok {
				e.Pid1Environ = v
			}
		}
	}
	return detectContainer(e)
}
