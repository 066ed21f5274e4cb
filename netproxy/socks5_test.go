package netproxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

func TestReadRequest(t *testing.T) {
	domain := func(name string, port uint16) []byte {
		b := append([]byte{5, 1, 0, 3, byte(len(name))}, name...)
		return binary.BigEndian.AppendUint16(b, port)
	}
	tests := []struct {
		name    string
		in      []byte
		want    socksRequest
		wantRep int // -1: no reply (drop), else the reply code of the error
	}{
		{name: "domain", in: domain("example.com", 443), want: socksRequest{cmd: 1, host: "example.com", port: 443}},
		{name: "ipv4", in: []byte{5, 1, 0, 1, 192, 0, 2, 1, 0, 80}, want: socksRequest{cmd: 1, host: "192.0.2.1", port: 80}},
		{name: "ipv6", in: append([]byte{5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 0x01, 0xbb),
			want: socksRequest{cmd: 1, host: "2001:db8::1", port: 443}},
		{name: "bind", in: []byte{5, 2, 0, 1, 1, 2, 3, 4, 0, 80}, wantRep: repCmdNotSupported},
		{name: "udp associate", in: []byte{5, 3, 0, 1, 0, 0, 0, 0, 0, 0}, wantRep: repCmdNotSupported},
		{name: "bad atyp", in: []byte{5, 1, 0, 2, 1, 2, 3, 4, 0, 80}, wantRep: repAddrNotSupported},
		{name: "empty domain", in: []byte{5, 1, 0, 3, 0, 0, 80}, wantRep: repAddrNotSupported},
		{name: "reserved set", in: []byte{5, 1, 1, 1, 1, 2, 3, 4, 0, 80}, wantRep: repGeneralFailure},
		{name: "socks4", in: []byte{4, 1, 0, 80, 1, 2, 3, 4, 0}, wantRep: -1},
		{name: "short", in: []byte{5, 1, 0, 3, 10, 'a'}, wantRep: -1},
		{name: "empty", in: nil, wantRep: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if tc.wantRep == 0 {
				in = append(in, "tunnel data"...)
			}
			r := bytes.NewReader(in)
			got, err := readRequest(r)
			if tc.wantRep == 0 {
				if err != nil || got != tc.want {
					t.Fatalf("readRequest = %+v, %v; want %+v", got, err, tc.want)
				}
				if rest := r.Len(); rest != len("tunnel data") {
					t.Fatalf("readRequest consumed %d bytes of the tunnel", len("tunnel data")-rest)
				}
				return
			}
			se, ok := errors.AsType[*socksError](err)
			switch {
			case tc.wantRep < 0 && ok:
				t.Fatalf("readRequest: %v with reply %d; want a drop", err, se.rep)
			case tc.wantRep < 0 && err == nil:
				t.Fatalf("readRequest = %+v; want an error", got)
			case tc.wantRep > 0 && (!ok || int(se.rep) != tc.wantRep):
				t.Fatalf("readRequest: %v; want reply %d", err, tc.wantRep)
			}
		})
	}
}

func TestReadGreeting(t *testing.T) {
	for _, tc := range []struct {
		in     []byte
		noAuth bool
		err    bool
	}{
		{in: []byte{1, 0}, noAuth: true},
		{in: []byte{2, 2, 0}, noAuth: true},
		{in: []byte{1, 2}},
		{in: []byte{0}, err: true},
		{in: []byte{3, 0}, err: true},
	} {
		ok, err := readGreeting(bytes.NewReader(tc.in))
		if ok != tc.noAuth || (err != nil) != tc.err {
			t.Errorf("readGreeting(%v) = %v, %v", tc.in, ok, err)
		}
	}
}

// FuzzSOCKS5Request: the SOCKS5 greeting and request parsers never panic,
// never read past the request, and a request they accept re-encodes to the
// bytes they read.
func FuzzSOCKS5Request(f *testing.F) {
	f.Add([]byte{1, 0, 5, 1, 0, 3, 11, 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'c', 'o', 'm', 1, 187})
	f.Add([]byte{1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80})
	f.Add([]byte{2, 2, 0, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 22})
	f.Add([]byte{1, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 0, 5, 1, 0, 3, 0, 0, 80})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		if _, err := readGreeting(r); err != nil {
			return
		}
		start := len(data) - r.Len()
		req, err := readRequest(r)
		if err != nil {
			return
		}
		used := data[start : len(data)-r.Len()]
		if req.cmd != cmdConnect || req.host == "" || req.port < 0 || req.port > 65535 {
			t.Fatalf("accepted %+v", req)
		}
		var enc []byte
		switch a, err := netip.ParseAddr(req.host); {
		case used[3] == atypDomain:
			enc = append([]byte{5, req.cmd, 0, atypDomain, byte(len(req.host))}, req.host...)
		case err == nil && a.Is4():
			enc = append([]byte{5, req.cmd, 0, atypIPv4}, a.AsSlice()...)
		case err == nil:
			enc = append([]byte{5, req.cmd, 0, atypIPv6}, a.AsSlice()...)
		default:
			t.Fatalf("address type %d gave host %q", used[3], req.host)
		}
		enc = binary.BigEndian.AppendUint16(enc, uint16(req.port))
		if !bytes.Equal(enc, used) {
			t.Fatalf("request %x re-encodes to %x", used, enc)
		}
	})
}
