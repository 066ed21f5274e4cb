//go:build linux && cgo

package serve

// client.c, cordon run's client of the daemon, runs from a C constructor
// before the Go runtime starts; this file gives Go what it leaves behind,
// and its tests a way in.

/*
#include <stdlib.h>
#include <sys/types.h>

int cordon_client_declined(void);
const char *cordon_client_flag(int i, int *value);
int cordon_client_scan(int argc, char **argv);
int cordon_client_state_root(const char *state, uid_t euid, int run_writable, const char *xdg, int owned_xdg, char *out, size_t n);
char *cordon_client_request(char **args, int nargs, const char *cwd, char **env, const char *binary, const char *hook);
long long cordon_client_hook_input_limit(void);
int cordon_client_answer(const char *line, size_t len, char *typ, size_t n, int *status);
char *cordon_client_cwd(void);
int cordon_client_binary(char *out, size_t n);
*/
import "C"

import (
	"unsafe"
)

// DeclinedEarly reports whether the C client (client.c) handed this
// process's cordon run to the daemon before Go started, and the daemon
// declined it: the run is a cold one, with no need to ask again.
func DeclinedEarly() bool { return C.cordon_client_declined() != 0 }

// ClientFlags are the flags of cordon run the C client lets through, by
// name, with whether each takes a value: any other flag leaves the run
// to Go.
func ClientFlags() map[string]bool {
	m := map[string]bool{}
	for i := 0; ; i++ {
		var v C.int
		name := C.cordon_client_flag(C.int(i), &v)
		if name == nil {
			return m
		}
		m[C.GoString(name)] = v != 0
	}
}

// cStrings is a NULL-terminated C array of ss; free releases it.
func cStrings(ss []string) (**C.char, func()) {
	arr := (*[1 << 28]*C.char)(C.malloc(C.size_t(len(ss)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))[: len(ss)+1 : len(ss)+1]
	for i, s := range ss {
		arr[i] = C.CString(s)
	}
	arr[len(ss)] = nil
	return &arr[0], func() {
		for _, p := range arr {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

// ClientScan is where the C client finds the command in cordon run's
// arguments (those after "run"): its index, -1 when it leaves them to Go.
func ClientScan(args []string) int {
	argv, free := cStrings(args)
	defer free()
	return int(C.cordon_client_scan(C.int(len(args)), argv))
}

// clientStateRoot is cordon_client_state_root.
func clientStateRoot(state string, euid int, runWritable bool, xdg string, owned bool) (string, bool) {
	cs, cx := C.CString(state), C.CString(xdg)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(cx))
	var out [4096]C.char
	o := C.int(0)
	if owned {
		o = 1
	}
	r := C.int(0)
	if runWritable {
		r = 1
	}
	if C.cordon_client_state_root(cs, C.uid_t(euid), r, cx, o, &out[0], C.size_t(len(out))) != 0 {
		return "", false
	}
	return C.GoString(&out[0]), true
}

// ClientHookInputLimit is the most of cordon hook claude's input the C
// client keeps (one byte more, to be refused).
func ClientHookInputLimit() int64 { return int64(C.cordon_client_hook_input_limit()) }

// clientRequest is cordon_client_request: the request line the C client
// sends.
func clientRequest(args []string, cwd string, env []string, binary, hook string) []byte {
	argv, freeArgs := cStrings(args)
	defer freeArgs()
	envp, freeEnv := cStrings(env)
	defer freeEnv()
	ccwd, cbin, chook := C.CString(cwd), C.CString(binary), C.CString(hook)
	defer C.free(unsafe.Pointer(ccwd))
	defer C.free(unsafe.Pointer(cbin))
	defer C.free(unsafe.Pointer(chook))
	line := C.cordon_client_request(argv, C.int(len(args)), ccwd, envp, cbin, chook)
	defer C.free(unsafe.Pointer(line))
	return []byte(C.GoString(line))
}

// clientAnswer is cordon_client_answer: a line's type and status; has is
// 1 with a status, 0 without, -1 for a line the C client refuses.
func clientAnswer(line []byte) (typ string, status int, has int) {
	var t [16]C.char
	var st C.int
	p := C.CBytes(line)
	defer C.free(p)
	has = int(C.cordon_client_answer((*C.char)(p), C.size_t(len(line)), &t[0], C.size_t(len(t)), &st))
	if has < 0 {
		return "", 0, has
	}
	return C.GoString(&t[0]), int(st), has
}

// clientCwd is the working directory the C client sends.
func clientCwd() string {
	p := C.cordon_client_cwd()
	if p == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(p))
	return C.GoString(p)
}

// clientBinary is the binary identity the C client sends.
func clientBinary() (string, bool) {
	var out [128]C.char
	if C.cordon_client_binary(&out[0], C.size_t(len(out))) != 0 {
		return "", false
	}
	return C.GoString(&out[0]), true
}
