//go:build cgo

package runtime

// cgo builds the package's C sources: sandboxinit.c, cordon's init inside
// the sandbox, runs from a C constructor and needs nothing from Go;
// preheat.c primes the cgroup lock for a cold cordon run before Go starts
// (serve/client.c calls it).

// int cordon_cgroups_primed(void);
import "C"

// cgroupsPrimed reports whether preheat.c already primed the cgroup lock
// for this process.
func cgroupsPrimed() bool { return C.cordon_cgroups_primed() != 0 }
