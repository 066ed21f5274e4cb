package main

// A relay through the kernel's sockmap, measured beside cordon's proxy: the
// alternative to splicing that moves a tunnel's bytes without waking the
// proxy. An SK_SKB verdict program redirects what arrives on one socket of
// a pair to the egress of the other (bpf_sk_redirect_hash on a SOCKHASH
// keyed by the receiving socket's cookie). It needs CAP_BPF and
// CAP_NET_ADMIN. cordon does not use it: on this bench it moves bytes more
// slowly than splice(2) (the kernel sends redirected data from a worker
// thread, which waits a scheduler tick whenever the destination's send
// buffer is full), so the bench keeps the figure on record for the next
// kernel.
//
// The relay is the bench's own, not a proxy: the client never sends (the
// server speaks, the client reads transferSize bytes and closes), which is
// what makes its hand-over simple. A real proxy would also have to order
// bytes that arrive while the pair is put into the map, and to learn when
// the kernel has sent the last of them before passing a close on.

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BPF helper numbers (include/uapi/linux/bpf.h); x/sys/unix does not have
// them.
const (
	bpfFuncGetSocketCookie = 46
	bpfFuncSkRedirectHash  = 72
)

// bpfInsn is struct bpf_insn.
type bpfInsn struct {
	code uint8
	regs uint8 // dst in the low nibble, src in the high one
	off  int16
	imm  int32
}

func insn(code uint8, dst, src uint8, off int16, imm int32) bpfInsn {
	return bpfInsn{code: code, regs: dst | src<<4, off: off, imm: imm}
}

func bpf(cmd int, attr unsafe.Pointer, size uintptr) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(attr), size)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// sockmapRelay accepts connections and relays each, in the kernel, from a
// new connection to target.
type sockmapRelay struct {
	l             net.Listener
	target        string
	mapFD, progFD int
}

func startSockmapRelay(target string) (*sockmapRelay, error) {
	r := &sockmapRelay{target: target, mapFD: -1, progFD: -1}
	if err := r.load(); err != nil {
		r.Close()
		return nil, err
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		r.Close()
		return nil, err
	}
	r.l = l
	go r.serve()
	return r, nil
}

// load creates the SOCKHASH, loads the verdict program and attaches it.
func (r *sockmapRelay) load() error {
	mapAttr := struct{ typ, keySize, valueSize, maxEntries, flags uint32 }{
		typ: unix.BPF_MAP_TYPE_SOCKHASH, keySize: 8, valueSize: 8, maxEntries: 64}
	fd, err := bpf(unix.BPF_MAP_CREATE, unsafe.Pointer(&mapAttr), unsafe.Sizeof(mapAttr))
	if err != nil {
		return fmt.Errorf("create a SOCKHASH: %w", err)
	}
	r.mapFD = fd
	prog := []bpfInsn{
		insn(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_X, 6, 1, 0, 0),                                 // r6 = skb
		insn(unix.BPF_JMP|unix.BPF_CALL, 0, 0, 0, bpfFuncGetSocketCookie),                        // r0 = cookie
		insn(unix.BPF_STX|unix.BPF_MEM|unix.BPF_DW, 10, 0, -8, 0),                                // key on the stack
		insn(unix.BPF_LD|unix.BPF_IMM|unix.BPF_DW, 2, unix.BPF_PSEUDO_MAP_FD, 0, int32(r.mapFD)), // r2 = map
		insn(0, 0, 0, 0, 0),
		insn(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_X, 1, 6, 0, 0),  // r1 = skb
		insn(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_X, 3, 10, 0, 0), // r3 = &key
		insn(unix.BPF_ALU64|unix.BPF_ADD|unix.BPF_K, 3, 0, 0, -8),
		insn(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_K, 4, 0, 0, 0), // flags: egress
		insn(unix.BPF_JMP|unix.BPF_CALL, 0, 0, 0, bpfFuncSkRedirectHash),
		insn(unix.BPF_JMP|unix.BPF_EXIT, 0, 0, 0, 0),
	}
	license := []byte("GPL\x00")
	logBuf := make([]byte, 16<<10)
	progAttr := struct {
		typ, insnCnt      uint32
		insns, license    uint64
		logLevel, logSize uint32
		logBuf            uint64
		kernVersion       uint32
		progFlags         uint32
	}{
		typ: unix.BPF_PROG_TYPE_SK_SKB, insnCnt: uint32(len(prog)),
		insns:    uint64(uintptr(unsafe.Pointer(&prog[0]))),
		license:  uint64(uintptr(unsafe.Pointer(&license[0]))),
		logLevel: 1, logSize: uint32(len(logBuf)), logBuf: uint64(uintptr(unsafe.Pointer(&logBuf[0]))),
	}
	fd, err = bpf(unix.BPF_PROG_LOAD, unsafe.Pointer(&progAttr), unsafe.Sizeof(progAttr))
	runtime.KeepAlive(prog)
	runtime.KeepAlive(license)
	if err != nil {
		return fmt.Errorf("load the verdict program: %w: %s", err, cString(logBuf))
	}
	r.progFD = fd
	attach := struct{ target, prog, typ, flags uint32 }{
		target: uint32(r.mapFD), prog: uint32(r.progFD), typ: unix.BPF_SK_SKB_VERDICT}
	if _, err := bpf(unix.BPF_PROG_ATTACH, unsafe.Pointer(&attach), unsafe.Sizeof(attach)); err != nil {
		return fmt.Errorf("attach the verdict program: %w", err)
	}
	return nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func (r *sockmapRelay) Addr() string { return r.l.Addr().String() }

func (r *sockmapRelay) Close() {
	if r.l != nil {
		r.l.Close()
	}
	// closing the last descriptors frees the map, which releases its
	// sockets and detaches the program
	if r.mapFD >= 0 {
		unix.Close(r.mapFD)
	}
	if r.progFD >= 0 {
		unix.Close(r.progFD)
	}
}

func (r *sockmapRelay) serve() {
	for {
		c, err := r.l.Accept()
		if err != nil {
			return
		}
		go r.relay(c.(*net.TCPConn))
	}
}

// relay puts the pair into the map and waits for the client to close.
func (r *sockmapRelay) relay(c *net.TCPConn) {
	defer c.Close()
	uc, err := net.Dial("tcp4", r.target)
	if err != nil {
		return
	}
	u := uc.(*net.TCPConn)
	defer u.Close()
	cfd, cCookie, err := fdCookie(c)
	if err != nil {
		return
	}
	ufd, uCookie, err := fdCookie(u)
	if err != nil {
		return
	}
	// Fixed 4 MiB buffers (net.core.wmem_max here) on both: the worker
	// that sends redirected bytes waits a tick whenever the destination's
	// send buffer is full; of the sizes tried, this did best.
	for _, x := range []*net.TCPConn{c, u} {
		x.SetWriteBuffer(4 << 20)
		x.SetReadBuffer(4 << 20)
	}
	// The client's socket first: the client sends nothing, so nothing
	// arrives on it before its peer is in the map (a redirect to a socket
	// not in the map drops the bytes).
	if r.put(uCookie, cfd) != nil || r.put(cCookie, ufd) != nil {
		return
	}
	// What the server sent before the pair was in the map waits in the
	// upstream socket: setting SO_RCVLOWAT runs the verdict on it now.
	unix.SetsockoptInt(ufd, unix.SOL_SOCKET, unix.SO_RCVLOWAT, 1)
	var b [1]byte
	c.Read(b[:]) // returns when the client closes
}

func (r *sockmapRelay) put(key uint64, fd int) error {
	val := uint64(fd)
	attr := struct {
		mapFD uint32
		_     uint32
		key   uint64
		value uint64
		flags uint64
	}{mapFD: uint32(r.mapFD), key: uint64(uintptr(unsafe.Pointer(&key))), value: uint64(uintptr(unsafe.Pointer(&val)))}
	_, err := bpf(unix.BPF_MAP_UPDATE_ELEM, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	runtime.KeepAlive(&key)
	runtime.KeepAlive(&val)
	return err
}

// fdCookie is the socket's descriptor (valid while c is open) and cookie.
func fdCookie(c *net.TCPConn) (int, uint64, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var fd int
	var cookie uint64
	var serr error
	if err := rc.Control(func(f uintptr) {
		fd = int(f)
		cookie, serr = unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_COOKIE)
	}); err != nil {
		return 0, 0, err
	}
	if serr != nil {
		return 0, 0, serr
	}
	if cookie == 0 {
		return 0, 0, errors.New("no socket cookie")
	}
	return fd, cookie, nil
}
