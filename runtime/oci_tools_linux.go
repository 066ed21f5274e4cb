package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/capabilities"
	"github.com/opencontainers/runc/libcontainer/configs"
	lcseccomp "github.com/opencontainers/runc/libcontainer/seccomp"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runc/types"
	runcfeatures "github.com/opencontainers/runc/types/features"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// ConfigureLog sends cordon's and libcontainer's log lines where runc
// sends its own: to path (appended, synchronously) or stderr, as text or
// as JSON lines {"level":"error","msg":...,"time":...} with a lowercase
// level, which containerd's shim reads.
func ConfigureLog(path, format string, debug bool) error {
	logrus.SetOutput(os.Stderr)
	logrus.SetLevel(logrus.InfoLevel)
	if debug {
		logrus.SetLevel(logrus.DebugLevel)
	}
	switch format {
	case "", "text":
		logrus.SetFormatter(&logrus.TextFormatter{})
	case "json":
		logrus.SetFormatter(new(logrus.JSONFormatter))
	default:
		return errors.New("invalid log-format: " + format)
	}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_SYNC, 0o644)
		if err != nil {
			return err
		}
		logrus.SetOutput(f)
		// A container's monitor logs there too.
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	logSettings.path, logSettings.format = path, format
	return nil
}

// LogError writes err to the log as an error line and reports whether
// the log is stderr, where the caller need not print it again.
func LogError(err error) (toStderr bool) {
	logrus.Error(err)
	f, ok := logrus.StandardLogger().Out.(*os.File)
	return ok && f.Fd() == os.Stderr.Fd()
}

// waitForwarding passes the signals this process receives on to p until
// it exits, and returns its exit status (128+N for signal N).
func waitForwarding(p *libcontainer.Process, term *terminal, sigs chan os.Signal) (int, error) {
	waited := make(chan waitResult, 1)
	go func() {
		st, err := p.Wait()
		waited <- waitResult{st, err}
	}()
	if term != nil {
		term.resize()
	}
	for {
		select {
		case s := <-sigs:
			switch s {
			case unix.SIGCHLD, unix.SIGURG:
			case unix.SIGWINCH:
				if term != nil {
					term.resize()
				}
			default:
				if err := p.Signal(s); err != nil {
					logrus.Debug(err)
				}
			}
		case w := <-waited:
			if term != nil {
				term.drain(100 * time.Millisecond)
			}
			return exitStatus(w.state, w.err)
		}
	}
}

func notifyAll() chan os.Signal {
	c := make(chan os.Signal, 2048)
	signal.Notify(c)
	return c
}

func stopNotify(c chan os.Signal) { signal.Stop(c) }

// Update changes the resource limits of a live container: the fields r
// sets, as runc's update does.
func (o OCI) Update(id string, r *specs.LinuxResources) error {
	c, err := o.load(id)
	if err != nil {
		return err
	}
	if r.Memory == nil {
		r.Memory = &specs.LinuxMemory{}
	}
	if r.CPU == nil {
		r.CPU = &specs.LinuxCPU{}
	}
	if r.BlockIO == nil {
		r.BlockIO = &specs.LinuxBlockIO{}
	}
	if r.Pids == nil {
		r.Pids = &specs.LinuxPids{}
	}
	if r.Memory.Limit != nil && *r.Memory.Limit == -1 && r.Memory.Swap == nil {
		// "unable to set swap limit without memory limit" otherwise
		r.Memory.Swap = ptrTo[int64](0)
	}
	if r.CPU.Idle != nil && r.CPU.Shares == nil {
		r.CPU.Shares = ptrTo[uint64](0)
	}
	config := c.Config()
	res := config.Cgroups.Resources
	if r.BlockIO.Weight != nil {
		res.BlkioWeight = *r.BlockIO.Weight
	}
	if r.BlockIO.LeafWeight != nil {
		res.BlkioLeafWeight = *r.BlockIO.LeafWeight
	}
	for _, wd := range r.BlockIO.WeightDevice {
		res.BlkioWeightDevice = upsertWeightDevice(res.BlkioWeightDevice, wd)
	}
	for _, td := range r.BlockIO.ThrottleReadBpsDevice {
		res.BlkioThrottleReadBpsDevice = upsertThrottleDevice(res.BlkioThrottleReadBpsDevice, td)
	}
	for _, td := range r.BlockIO.ThrottleWriteBpsDevice {
		res.BlkioThrottleWriteBpsDevice = upsertThrottleDevice(res.BlkioThrottleWriteBpsDevice, td)
	}
	for _, td := range r.BlockIO.ThrottleReadIOPSDevice {
		res.BlkioThrottleReadIOPSDevice = upsertThrottleDevice(res.BlkioThrottleReadIOPSDevice, td)
	}
	for _, td := range r.BlockIO.ThrottleWriteIOPSDevice {
		res.BlkioThrottleWriteIOPSDevice = upsertThrottleDevice(res.BlkioThrottleWriteIOPSDevice, td)
	}
	// Quota and period set alone keep the other's old value (systemd and
	// cgroup v2 need both).
	var (
		period uint64
		quota  int64
	)
	if r.CPU.Period != nil {
		period = *r.CPU.Period
	}
	if r.CPU.Quota != nil {
		quota = *r.CPU.Quota
	}
	switch {
	case (period == 0) == (quota == 0):
		res.CpuPeriod, res.CpuQuota = period, quota
	case period != 0:
		res.CpuPeriod = period
	default:
		res.CpuQuota = quota
	}
	res.CpuBurst = r.CPU.Burst
	if r.CPU.Shares != nil {
		res.CpuShares = *r.CPU.Shares
		res.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(*r.CPU.Shares)
	}
	if r.CPU.RealtimePeriod != nil {
		res.CpuRtPeriod = *r.CPU.RealtimePeriod
	}
	if r.CPU.RealtimeRuntime != nil {
		res.CpuRtRuntime = *r.CPU.RealtimeRuntime
	}
	res.CpusetCpus, res.CpusetMems = r.CPU.Cpus, r.CPU.Mems
	if r.Memory.Limit != nil {
		res.Memory = *r.Memory.Limit
	}
	res.CPUIdle = r.CPU.Idle
	if r.Memory.Reservation != nil {
		res.MemoryReservation = *r.Memory.Reservation
	}
	if r.Memory.Swap != nil {
		res.MemorySwap = *r.Memory.Swap
	}
	if r.Memory.CheckBeforeUpdate != nil {
		res.MemoryCheckBeforeUpdate = *r.Memory.CheckBeforeUpdate
	}
	res.PidsLimit = r.Pids.Limit
	res.Unified = r.Unified
	// As runc: update cannot change device rules; a plugin's own device
	// configuration must survive it.
	config.Cgroups.SkipDevices = true
	return c.Set(config)
}

func ptrTo[T any](v T) *T { return &v }

func upsertWeightDevice(devs []*cgroups.WeightDevice, wd specs.LinuxWeightDevice) []*cgroups.WeightDevice {
	for i, d := range slices.Backward(devs) {
		if d.Major != wd.Major || d.Minor != wd.Minor {
			continue
		}
		if wd.Weight != nil {
			devs[i].Weight = *wd.Weight
		}
		if wd.LeafWeight != nil {
			devs[i].LeafWeight = *wd.LeafWeight
		}
		return devs
	}
	var w, lw uint16
	if wd.Weight != nil {
		w = *wd.Weight
	}
	if wd.LeafWeight != nil {
		lw = *wd.LeafWeight
	}
	return append(devs, cgroups.NewWeightDevice(wd.Major, wd.Minor, w, lw))
}

func upsertThrottleDevice(devs []*cgroups.ThrottleDevice, td specs.LinuxThrottleDevice) []*cgroups.ThrottleDevice {
	for i, d := range slices.Backward(devs) {
		if d.Major == td.Major && d.Minor == td.Minor {
			devs[i].Rate = td.Rate
			return devs
		}
	}
	return append(devs, cgroups.NewThrottleDevice(td.Major, td.Minor, td.Rate))
}

// Events reports the container's resource usage (type "stats") every
// interval and its OOM kills (type "oom") until it stops; with once, one
// stats event only.
func (o OCI) Events(id string, interval time.Duration, once bool, emit func(*Event) error) error {
	c, err := o.load(id)
	if err != nil {
		return err
	}
	if interval <= 0 {
		return errors.New("duration interval must be greater than 0")
	}
	status, err := c.Status()
	if err != nil {
		return err
	}
	if status == libcontainer.Stopped {
		return fmt.Errorf("container with id %s is not running", id)
	}
	stats := func() error {
		s, err := c.Stats()
		if err != nil {
			return err
		}
		return emit(&Event{Type: "stats", ID: id, Data: convertStats(s)})
	}
	if once {
		return stats()
	}
	oom, err := c.NotifyOOM()
	if err != nil {
		return err
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case _, ok := <-oom:
			if !ok {
				// The cgroup is gone: the container stopped.
				return nil
			}
			if err := emit(&Event{Type: "oom", ID: id}); err != nil {
				return err
			}
		case <-tick.C:
			if err := stats(); err != nil {
				logrus.Error(err)
			}
		}
	}
}

// convertStats is runc's convertLibcontainerStats, without Intel RDT.
func convertStats(ls *libcontainer.Stats) *types.Stats {
	cg := ls.CgroupStats
	if cg == nil {
		return nil
	}
	var s types.Stats
	s.Pids.Current = cg.PidsStats.Current
	s.Pids.Limit = cg.PidsStats.Limit
	s.CPU.Usage.Kernel = cg.CpuStats.CpuUsage.UsageInKernelmode
	s.CPU.Usage.User = cg.CpuStats.CpuUsage.UsageInUsermode
	s.CPU.Usage.Total = cg.CpuStats.CpuUsage.TotalUsage
	s.CPU.Usage.Percpu = cg.CpuStats.CpuUsage.PercpuUsage
	s.CPU.Usage.PercpuKernel = cg.CpuStats.CpuUsage.PercpuUsageInKernelmode
	s.CPU.Usage.PercpuUser = cg.CpuStats.CpuUsage.PercpuUsageInUsermode
	s.CPU.Throttling.Periods = cg.CpuStats.ThrottlingData.Periods
	s.CPU.Throttling.ThrottledPeriods = cg.CpuStats.ThrottlingData.ThrottledPeriods
	s.CPU.Throttling.ThrottledTime = cg.CpuStats.ThrottlingData.ThrottledTime
	s.CPU.PSI = cg.CpuStats.PSI
	s.CPUSet = types.CPUSet(cg.CPUSetStats)
	s.Memory.Cache = cg.MemoryStats.Cache
	s.Memory.Kernel = memoryEntry(cg.MemoryStats.KernelUsage)
	s.Memory.KernelTCP = memoryEntry(cg.MemoryStats.KernelTCPUsage)
	s.Memory.Swap = memoryEntry(cg.MemoryStats.SwapUsage)
	s.Memory.Usage = memoryEntry(cg.MemoryStats.Usage)
	s.Memory.Raw = cg.MemoryStats.Stats
	s.Memory.PSI = cg.MemoryStats.PSI
	s.Blkio.IoServiceBytesRecursive = blkioEntries(cg.BlkioStats.IoServiceBytesRecursive)
	s.Blkio.IoServicedRecursive = blkioEntries(cg.BlkioStats.IoServicedRecursive)
	s.Blkio.IoQueuedRecursive = blkioEntries(cg.BlkioStats.IoQueuedRecursive)
	s.Blkio.IoServiceTimeRecursive = blkioEntries(cg.BlkioStats.IoServiceTimeRecursive)
	s.Blkio.IoWaitTimeRecursive = blkioEntries(cg.BlkioStats.IoWaitTimeRecursive)
	s.Blkio.IoMergedRecursive = blkioEntries(cg.BlkioStats.IoMergedRecursive)
	s.Blkio.IoTimeRecursive = blkioEntries(cg.BlkioStats.IoTimeRecursive)
	s.Blkio.SectorsRecursive = blkioEntries(cg.BlkioStats.SectorsRecursive)
	s.Blkio.PSI = cg.BlkioStats.PSI
	s.Hugetlb = make(map[string]types.Hugetlb)
	for k, v := range cg.HugetlbStats {
		s.Hugetlb[k] = types.Hugetlb{Usage: v.Usage, Max: v.MaxUsage, Failcnt: v.Failcnt}
	}
	s.NetworkInterfaces = ls.Interfaces
	return &s
}

func memoryEntry(c cgroups.MemoryData) types.MemoryEntry {
	return types.MemoryEntry{Limit: c.Limit, Usage: c.Usage, Max: c.MaxUsage, Failcnt: c.Failcnt}
}

func blkioEntries(c []cgroups.BlkioStatEntry) []types.BlkioEntry {
	out := make([]types.BlkioEntry, 0, len(c))
	for _, e := range c {
		out = append(out, types.BlkioEntry(e))
	}
	return out
}

// Features returns what this runtime supports, in the runtime spec's
// features format, as runc's features does (cordon has libcontainer's
// features; it has no checkpointing, AppArmor, SELinux or Intel RDT
// support of its own to add).
func Features() *features.Features {
	t := true
	f := &features.Features{
		OCIVersionMin: "1.0.0",
		OCIVersionMax: specs.Version,
		Annotations: map[string]string{
			runcfeatures.AnnotationRuncCheckpointEnabled: "false",
			// The annotations that ask cordon for a policy.
			"dev.cordon.annotations": spec.AnnotationPolicy + "," + spec.AnnotationNetwork + "," + spec.AnnotationAllowedDomains,
		},
		Hooks:        configs.KnownHookNames(),
		MountOptions: specconv.KnownMountOptions(),
		Linux: &features.Linux{
			Namespaces:   specconv.KnownNamespaces(),
			Capabilities: capabilities.KnownCapabilities(),
			Cgroup: &features.Cgroup{
				V1: &t, V2: &t, Systemd: &t, SystemdUser: &t, Rdma: &t,
			},
			Apparmor: &features.Apparmor{Enabled: &t},
			Selinux:  &features.Selinux{Enabled: &t},
			IntelRdt: &features.IntelRdt{Enabled: &t, Schemata: &t, Monitoring: &t},
			MemoryPolicy: &features.MemoryPolicy{
				Modes: specconv.KnownMemoryPolicyModes(),
				Flags: specconv.KnownMemoryPolicyFlags(),
			},
			MountExtensions: &features.MountExtensions{IDMap: &features.IDMap{Enabled: &t}},
			NetDevices:      &features.NetDevices{Enabled: &t},
		},
		PotentiallyUnsafeConfigAnnotations: []string{
			"bundle",
			"org.systemd.property.", // prefix form
			"org.criu.config",
		},
	}
	if lcseccomp.Enabled {
		f.Linux.Seccomp = &features.Seccomp{
			Enabled:        &t,
			Actions:        lcseccomp.KnownActions(),
			Operators:      lcseccomp.KnownOperators(),
			Archs:          lcseccomp.KnownArchs(),
			KnownFlags:     lcseccomp.KnownFlags(),
			SupportedFlags: lcseccomp.SupportedFlags(),
		}
		major, minor, patch := lcseccomp.Version()
		f.Annotations[runcfeatures.AnnotationLibseccompVersion] = fmt.Sprintf("%d.%d.%d", major, minor, patch)
	}
	return f
}

// ExampleSpec returns runc's starter config.json (`spec`), made for a
// rootless container when asked.
func ExampleSpec(rootless bool) *specs.Spec {
	s := specconv.Example()
	if rootless {
		specconv.ToRootless(s)
	}
	return s
}
