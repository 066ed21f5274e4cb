package darwin

// The fixed part of every profile: what a shell, git, the compilers (clang,
// swift, rustc, go) and the language runtimes (Node, Python, Java) ask of
// the system besides files and the network. Learnt from sandbox-runtime's
// and Codex's Seatbelt profiles (both derived from Chrome's), and narrower
// than either where a grant would reach outside the sandbox.

// sysctlNames may be read: hardware and kernel facts that runtimes size
// their thread pools and memory by, and that uname, sw_vers and ps read.
var sysctlNames = []string{
	"hw.activecpu", "hw.busfrequency_compat", "hw.byteorder", "hw.cacheconfig",
	"hw.cachelinesize_compat", "hw.cpufamily", "hw.cpufrequency", "hw.cpufrequency_compat",
	"hw.cputype", "hw.l1dcachesize_compat", "hw.l1icachesize_compat", "hw.l2cachesize_compat",
	"hw.l3cachesize_compat", "hw.logicalcpu", "hw.logicalcpu_max", "hw.machine", "hw.memsize",
	"hw.model", "hw.ncpu", "hw.nperflevels", "hw.packages", "hw.pagesize", "hw.pagesize_compat",
	"hw.physicalcpu", "hw.physicalcpu_max", "hw.tbfrequency_compat", "hw.vectorunit",
	"kern.argmax", "kern.boottime", "kern.hostname", "kern.maxfiles", "kern.maxfilesperproc",
	"kern.maxproc", "kern.ngroups", "kern.osproductversion", "kern.osrelease", "kern.ostype",
	"kern.osvariant_status", "kern.osversion", "kern.secure_kernel", "kern.tcsm_available",
	"kern.usrstack64", "kern.version", "machdep.ptrauth_enabled",
	"security.mac.lockdown_mode_state", "sysctl.proc_cputype", "sysctl.proc_translated",
	"vm.loadavg",
}

// sysctlPrefixes may be read: CPU features (Go's and Rust's runtime feature
// detection), performance levels, the process table (ps; the processes'
// details stay behind process-info), and the routing table (interface
// lists).
var sysctlPrefixes = []string{
	"hw.optional.", "hw.perflevel", "kern.proc.all", "kern.proc.pgrp.", "kern.proc.pid.",
	"machdep.cpu.", "net.routetable.",
}

// sysctlWritable may be "written": Java passes a buffer to read the CPU
// type, which the kernel counts as a write.
var sysctlWritable = []string{"kern.grade_cputype"}

// machServices may be looked up. Each is a system daemon the C library or
// CoreFoundation talks to on a shell's ordinary path.
var machServices = []string{
	"com.apple.bsd.dirhelper",                      // confstr(_CS_DARWIN_USER_TEMP_DIR) and friends
	"com.apple.cfprefsd.agent",                     // CFPreferences reads (writes stay denied)
	"com.apple.cfprefsd.daemon",                    //
	"com.apple.logd",                               // os_log
	"com.apple.PowerManagement.control",            // IOPM assertions (caffeinate, xcodebuild)
	"com.apple.system.DirectoryService.libinfo_v1", // getpwuid, getgrgid (older systems)
	"com.apple.system.logger",                      // syslog, asl
	"com.apple.system.notification_center",         // notify(3): time zone and network change notices
	"com.apple.system.opendirectoryd.libinfo",      // getpwuid, getgrgid: whoami, id, git, ssh
	"com.apple.system.opendirectoryd.membership",   // group membership
}

// trustdServices verify TLS certificates through the system trust store:
// Go's crypto/x509 (SecTrustEvaluateWithError since Go 1.18), Rust's
// native-tls and rustls-platform-verifier, and Swift need them; curl,
// Python and Node bring their own roots. Without them verification fails
// with "x509: OSStatus -26276" (Claude Code's and sandbox-runtime's issue
// reports; com.apple.trustd, the system daemon, is not the one asked).
// trustd fetches the intermediate certificates, OCSP responses and CRLs a
// certificate names, from any host: a command that can hand trustd a
// certificate of its making can reach past the domain filter. It hands out
// no keychain item (that is SecurityServer, which stays closed). Granted
// with the policy's EnableWeakerNetworkIsolation, sandbox-runtime's
// switch for the same service, when the policy allows any domain.
var trustdServices = []string{"com.apple.trustd.agent"}

// darwinCredentialStores are macOS's own credential stores, relative to the
// home directory, denied like the default policy's denyRead.
var darwinCredentialStores = []string{"Library/Keychains"}

// homeProtected are paths, relative to the home directory, that no
// command may write wherever the writable roots are, macOS's own besides
// policy.ProtectedInHome: what runs outside any sandbox by itself. launchd
// starts the agents at the next login; applications read their
// preferences (Terminal's and iTerm2's start a command in every new
// window; the sandbox refuses writing them through cfprefsd, so the files
// are the only way); iTerm2 runs its AutoLaunch scripts when it starts;
// Folder Actions run their scripts when a folder changes.
var homeProtected = []string{
	"Library/LaunchAgents", "Library/Preferences",
	"Library/Application Support/iTerm2/Scripts/AutoLaunch", "Library/Scripts/Folder Action Scripts",
}

// syslogSocket is where syslog(3) writes.
const syslogSocket = "/private/var/run/syslog"

// gitRedirects are the files of a git directory that send git elsewhere
// for its config and hooks: a commondir file makes another directory the
// repository's common directory, whose config git reads (core.fsmonitor
// runs at git status) and whose hooks it runs. Protected like the git
// directory's hooks and config, as spec's mount plan does on Linux, until
// policy.ProtectedInGitDir holds them.
var gitRedirects = []string{"commondir", "modules/*/commondir", "worktrees/*/commondir"}
