package seccomp

// Program is a compiled seccomp filter, ready for
// seccomp(SECCOMP_SET_MODE_FILTER, Flags, &prog) with prog a struct
// sock_fprog over Filter. Compile makes one.
type Program struct {
	// Filter is the program: struct sock_filter[], in the byte order of
	// the machine that compiled it, 8 bytes per instruction.
	Filter []byte
	// Flags are the SECCOMP_FILTER_FLAG_* bits for seccomp(2), from the
	// profile's flags.
	Flags uint
}
